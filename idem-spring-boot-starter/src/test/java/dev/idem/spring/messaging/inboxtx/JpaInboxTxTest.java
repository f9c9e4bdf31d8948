package dev.idem.spring.messaging.inboxtx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxHandlerException;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * An application whose only transaction manager is a {@link JpaTransactionManager} (as with Spring Boot's JPA
 * auto-configuration), on H2: the starter's inbox runs its transactions through it, since it exposes the inbox's
 * data source, so an entity the handler persists, a {@code JdbcTemplate} write and the inbox row commit together, or
 * none of them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JpaInboxTxTest {
  private ConfigurableApplicationContext context;
  private JdbcTemplate jdbc;

  /** A parcel a handler ships, a JPA entity. */
  @Entity
  @Table(name = "inboxtx_jpa_parcel")
  public static class Parcel {
    @Id
    private String id;

    protected Parcel() {}

    Parcel(String id) {
      this.id = id;
    }
  }

  /** JPA configured by hand (a test dependency of the starter only); the factory exposes a shared EntityManager. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class JpaApp {
    @Bean
    LocalContainerEntityManagerFactoryBean entityManagerFactory(DataSource dataSource) {
      LocalContainerEntityManagerFactoryBean factory = new LocalContainerEntityManagerFactoryBean();
      factory.setDataSource(dataSource);
      factory.setPackagesToScan(JpaInboxTxTest.class.getPackageName());
      factory.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
      factory.setJpaPropertyMap(Map.of("hibernate.hbm2ddl.auto", "update"));
      return factory;
    }

    /** As Spring Boot's JPA auto-configuration makes it: the data source comes from the entity manager factory. */
    @Bean
    JpaTransactionManager transactionManager(EntityManagerFactory entityManagerFactory) {
      return new JpaTransactionManager(entityManagerFactory);
    }
  }

  @BeforeAll
  void start() {
    context = new SpringApplicationBuilder(JpaApp.class).web(WebApplicationType.NONE).run(
        "--spring.datasource.url=jdbc:h2:mem:inboxtx-jpa-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.outbox.initialize-schema=true");
    jdbc = context.getBean(JdbcTemplate.class);
    jdbc.execute("CREATE TABLE inboxtx_jpa_fx (event_id VARCHAR(64) NOT NULL)");
  }

  @AfterAll
  void stop() {
    if (context != null) {
      context.close();
    }
  }

  /** Persists a parcel, writes a row with JdbcTemplate, and throws after both on a {@code poison} payload. */
  private InboxHandler ship(List<Boolean> inSpringTransaction) {
    EntityManager entities = context.getBean(EntityManager.class);
    return (tx, event) -> {
      inSpringTransaction.add(TransactionSynchronizationManager.isActualTransactionActive());
      entities.persist(new Parcel(event.eventId()));
      entities.flush();
      jdbc.update("INSERT INTO inboxtx_jpa_fx (event_id) VALUES (?)", event.eventId());
      if ("poison".equals(new String(event.payload(), StandardCharsets.UTF_8))) {
        throw new IllegalStateException("poison " + event.eventId());
      }
      return "shipped";
    };
  }

  private int rows(String table, String column, String id) {
    return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE " + column + " = ?", Integer.class, id);
  }

  private static InboxEvent event(String id, String payload) {
    return InboxEvent.of(id, payload.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theEntityTheJdbcTemplateRowAndTheInboxRowCommitTogether() {
    Inbox inbox = context.getBean(Inbox.class);
    List<Boolean> inSpring = new ArrayList<>();
    String id = "jpa-" + UUID.randomUUID();

    inbox.processBatchAndCommit("inboxtx-jpa", List.of(event(id, "order")), ship(inSpring));

    assertThat(inSpring).containsExactly(true);
    assertThat(inbox.contains("inboxtx-jpa", id)).isTrue();
    assertThat(rows("inboxtx_jpa_parcel", "id", id)).isEqualTo(1);
    assertThat(rows("inboxtx_jpa_fx", "event_id", id)).isEqualTo(1);
  }

  @Test
  void aHandlerThatThrowsLeavesNoEntityNoRowAndNoInboxRow() {
    Inbox inbox = context.getBean(Inbox.class);
    String id = "jpa-poison-" + UUID.randomUUID();

    assertThatThrownBy(() -> inbox.processBatchAndCommit("inboxtx-jpa", List.of(event(id, "poison")),
        ship(new ArrayList<>()))).isInstanceOf(InboxHandlerException.class);

    assertThat(inbox.contains("inboxtx-jpa", id)).isFalse();
    assertThat(rows("inboxtx_jpa_parcel", "id", id)).isZero();
    assertThat(rows("inboxtx_jpa_fx", "event_id", id)).isZero();
  }
}
