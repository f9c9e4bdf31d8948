package dev.idem.spring.method.jpa;

import dev.idem.spring.Idempotent;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Id;
import jakarta.persistence.PersistenceContext;
import jakarta.persistence.Table;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot application whose effects are JPA entities (Hibernate), under a {@link JpaTransactionManager} on the
 * same DataSource as the record table. JPA is configured by hand, as a test dependency of the starter only.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({JpaShopApp.Orders.class, JpaShopApp.OrderRoutes.class})
public class JpaShopApp {

  @Entity
  @Table(name = "idem_jpa_order")
  public static class ShopOrder {
    @Id
    private String id;
    private String sku;

    protected ShopOrder() {}

    public ShopOrder(String id, String sku) {
      this.id = id;
      this.sku = sku;
    }

    public String getId() {
      return id;
    }

    public String getSku() {
      return sku;
    }
  }

  public record Placed(String id, String sku) {}

  @Bean
  LocalContainerEntityManagerFactoryBean entityManagerFactory(DataSource dataSource) {
    LocalContainerEntityManagerFactoryBean factory = new LocalContainerEntityManagerFactoryBean();
    factory.setDataSource(dataSource);
    factory.setPackagesToScan(JpaShopApp.class.getPackageName());
    factory.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
    factory.setJpaPropertyMap(Map.of("hibernate.hbm2ddl.auto", "update"));
    return factory;
  }

  /** As Spring Boot's JPA auto-configuration makes it: the DataSource comes from the entity manager factory. */
  @Bean
  JpaTransactionManager transactionManager(EntityManagerFactory entityManagerFactory) {
    return new JpaTransactionManager(entityManagerFactory);
  }

  /**
   * An atomic route whose effect is a JPA entity written through a {@code @Transactional} service: the filter joins
   * the JpaTransactionManager's transaction, so the entity and the record commit together.
   */
  @RestController
  public static class OrderRoutes {
    /** Runs of the handler per order id, committed or rolled back. */
    static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();
    private final Orders orders;

    OrderRoutes(Orders orders) {
      this.orders = orders;
    }

    @PostMapping("/jpa-orders/{id}")
    @Idempotent
    public ResponseEntity<Map<String, Object>> place(@RequestHeader("X-Tenant") String tenant,
        @PathVariable("id") String id, @RequestBody Map<String, Object> body) {
      RUNS.computeIfAbsent(tenant + "/" + id, k -> new AtomicInteger()).incrementAndGet();
      String sku = String.valueOf(body.get("sku"));
      orders.persistRouted(tenant, id, sku);
      if (sku.equals("flaky")) {
        throw new IllegalStateException("the warehouse did not answer");
      }
      return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("id", id, "sku", sku));
    }

    /** An atomic route whose effect is an atomic {@code @Idempotent} method's: both join the route's transaction. */
    @PostMapping("/jpa-placed/{id}")
    @Idempotent
    public ResponseEntity<Placed> placeThroughTheMethod(@RequestHeader("X-Tenant") String tenant,
        @PathVariable("id") String id, @RequestBody Map<String, Object> body) {
      RUNS.computeIfAbsent("placed/" + tenant + "/" + id, k -> new AtomicInteger()).incrementAndGet();
      return ResponseEntity.status(HttpStatus.CREATED).body(orders.place(tenant, id, String.valueOf(body.get("sku"))));
    }
  }

  @Service
  public static class Orders {
    @PersistenceContext
    private EntityManager entityManager;

    @Idempotent(key = "#id", scope = "#tenant")
    @Transactional
    public Placed place(String tenant, String id, String sku) {
      entityManager.persist(new ShopOrder(tenant + "/" + id, sku));
      if (sku.equals("flaky")) {
        throw new IllegalStateException("the warehouse did not answer");
      }
      return new Placed(id, sku);
    }

    /** An order persisted by the HTTP route, under the scope the gateway header names. */
    @Transactional
    public void persistRouted(String tenant, String id, String sku) {
      entityManager.persist(new ShopOrder(tenant + "/" + id, sku));
    }

    @Transactional(readOnly = true)
    public long count(String tenant, String id) {
      return entityManager.createQuery("select count(o) from JpaShopApp$ShopOrder o where o.id = :id", Long.class)
          .setParameter("id", tenant + "/" + id).getSingleResult();
    }
  }
}
