package dev.idem.spring.app;

import dev.idem.core.Checkpoint;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.StoredResponse;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.servlet.IdempotentExchange;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.servlet.Problem;
import dev.idem.spring.Idempotent;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.sql.Connection;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** A small Spring Boot application for the starter's tests: an atomic route, a phased route, bearer tenants. */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({OrdersApp.Orders.class, OrdersApp.OrderService.class})
public class OrdersApp {
  /** Charges made by the phased route, per derived key. */
  public static final Map<String, AtomicInteger> CHARGES = new ConcurrentHashMap<>();
  /** Runs of the phased route's first phase (committed or rolled back), per idempotency key. */
  public static final Map<String, AtomicInteger> CREATES = new ConcurrentHashMap<>();

  @Bean
  FilterRegistrationBean<Filter> bearerAuth() {
    FilterRegistrationBean<Filter> r = new FilterRegistrationBean<>((req, res, chain) -> {
      HttpServletRequest http = (HttpServletRequest) req;
      String auth = http.getHeader("Authorization");
      if (auth == null || !auth.startsWith("Bearer ")) {
        chain.doFilter(req, res);
        return;
      }
      String tenant = auth.substring(7);
      Principal p = () -> tenant;
      chain.doFilter(new HttpServletRequestWrapper(http) {
        @Override
        public Principal getUserPrincipal() {
          return p;
        }
      }, res);
    });
    r.setOrder(-100);
    return r;
  }

  @Bean
  PhasedOperation chargeOperation() {
    return PhasedOperation.builder("POST /charges")
        .inTransaction("create", ctx -> {
          CREATES.computeIfAbsent(ctx.key().value(), k -> new AtomicInteger()).incrementAndGet();
          JdbcTransaction.connectionOf(ctx.transaction());
          return PhaseResult.next(Checkpoint.empty().with("id", "chg_" + UUID.randomUUID()));
        })
        .outside("charge", ctx -> {
          CHARGES.computeIfAbsent(ctx.derivedKey("charge"), k -> new AtomicInteger()).incrementAndGet();
          return PhaseResult.next(ctx.checkpoint());
        })
        .inTransaction("done", ctx -> PhaseResult.respond(
            StoredResponse.json(201, "{\"id\":\"" + ctx.checkpoint().require("id") + "\"}")))
        .build();
  }

  /** Writes with JdbcTemplate inside {@code @Transactional}: joins the transaction the record commits in. */
  @Service
  public static class OrderService {
    private final JdbcTemplate jdbc;
    private final DataSource dataSource;

    public OrderService(JdbcTemplate jdbc, DataSource dataSource) {
      this.jdbc = jdbc;
      this.dataSource = dataSource;
      jdbc.execute("CREATE TABLE IF NOT EXISTS starter_order (id VARCHAR(64) PRIMARY KEY, tenant VARCHAR(64) NOT NULL,"
          + " idem_key VARCHAR(255) NOT NULL)");
    }

    @Transactional
    public String create(String tenant, String key) {
      String id = "ord_" + UUID.randomUUID();
      jdbc.update("INSERT INTO starter_order (id, tenant, idem_key) VALUES (?, ?, ?)", id, tenant, key);
      return id;
    }

    /** A write that happens at commit time, as a JPA flush or a beforeCommit hook does. */
    @Transactional
    public void createAtCommit(String tenant, String key) {
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
        @Override
        public void beforeCommit(boolean readOnly) {
          jdbc.update("INSERT INTO starter_order (id, tenant, idem_key) VALUES (?, ?, ?)",
              "late_" + UUID.randomUUID(), tenant, key);
        }
      });
    }

    /** Whether the caller runs in the connection Spring's transaction holds. */
    public boolean sameConnection(Connection recordConnection) {
      Connection c = DataSourceUtils.getConnection(dataSource);
      try {
        return unwrap(c) == unwrap(recordConnection);
      } finally {
        DataSourceUtils.releaseConnection(c, dataSource);
      }
    }

    private static Object unwrap(Connection c) {
      try {
        return c.isWrapperFor(Connection.class) ? c.unwrap(Connection.class) : c;
      } catch (java.sql.SQLException e) {
        return c;
      }
    }

    public int count(String tenant, String key) {
      return jdbc.queryForObject("SELECT COUNT(*) FROM starter_order WHERE tenant = ? AND idem_key = ?",
          Integer.class, tenant, key);
    }
  }

  /** The body of {@code POST /typed-orders}. */
  public record TypedOrder(String item, int qty) {}

  @RestController
  @RequestMapping("/")
  public static class Orders {
    private final OrderService orders;

    public Orders(OrderService orders) {
      this.orders = orders;
    }

    @PostMapping(path = "/orders", produces = MediaType.APPLICATION_JSON_VALUE)
    @Idempotent(ttl = "1h", fingerprintExclude = "/sent_at")
    public ResponseEntity<Map<String, Object>> create(@RequestBody Map<String, Object> body,
        HttpServletRequest request) {
      IdempotentExchange exchange = IdempotentExchange.current(request);
      String tenant = exchange.scope().value();
      String id = orders.create(tenant, exchange.key().value());
      boolean joined = orders.sameConnection(JdbcTransaction.connectionOf(exchange.transaction()));
      Object mode = body.get("mode");
      if ("transient-late".equals(mode)) {
        orders.createAtCommit(tenant, exchange.key().value());
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("code", "DEPENDENCY.unavailable"));
      }
      if ("transient".equals(mode)) {
        return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body(Map.of("code", "DEPENDENCY.unavailable"));
      }
      if ("throw".equals(mode)) {
        throw new IllegalStateException("failed after the write");
      }
      return ResponseEntity.status(HttpStatus.CREATED).header("Location", "/orders/" + id)
          .body(Map.of("id", id, "joined", joined));
    }

    @PostMapping("/charges")
    @Idempotent(mode = IdempotentRoute.Mode.PHASED, lease = "20s")
    public void charge(HttpServletRequest request, HttpServletResponse response) throws IOException {
      IdempotentExchange.current(request).phased(response);
    }

    @GetMapping("/orders/count")
    public Map<String, Object> count(String tenant, String key) {
      return Map.of("count", orders.count(tenant, key));
    }

    /** A typed body: Spring refuses one it cannot bind (400) before this method runs; the method refuses qty < 1. */
    @PostMapping(path = "/typed-orders", consumes = MediaType.APPLICATION_JSON_VALUE,
        produces = MediaType.APPLICATION_JSON_VALUE)
    @Idempotent
    public ResponseEntity<Map<String, Object>> createTyped(@RequestBody TypedOrder body, HttpServletRequest request) {
      IdempotentExchange exchange = IdempotentExchange.current(request);
      if (body.qty() < 1) {
        return ResponseEntity.status(422).body(Map.of("code", "VALIDATION.qty", "qty", body.qty()));
      }
      String id = orders.create(exchange.scope().value(), exchange.key().value());
      return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("id", id, "item", body.item()));
    }

    @PostMapping("/problem")
    public void problem(HttpServletResponse response) throws IOException {
      Problem.of(400, "VALIDATION.x", "x").write(response);
    }
  }
}
