package dev.idem.servlet;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Checkpoint;
import dev.idem.core.Idem;
import dev.idem.core.OperationPolicy;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.StoreException;
import dev.idem.core.StoredResponse;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.jdbc.JdbcTransaction;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.Principal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A small service in embedded Jetty 12 (or Tomcat 11) with the filter in front: {@code POST /orders} (atomic: the
 * handler writes a row through the exchange's transaction), {@code POST /payments} and {@code POST /payments-wait}
 * (phased: create, charge outside the database, capture), {@code GET /orders}. Bearer tokens {@code alice} and
 * {@code bob} are tenants; a request without a token is anonymous.
 */
final class TestService implements AutoCloseable {
  static final String DB_H2 = "h2";
  static final String DB_POSTGRES = "postgres";
  static final String DB_MARIADB = "mariadb";
  /** PostgreSQL in a schema of its own, dropped on close: counts of its tables see only this service's rows. */
  static final String DB_POSTGRES_OWN_SCHEMA = "postgres-own-schema";
  static final String JETTY = "jetty";
  static final String TOMCAT = "tomcat";
  static final int MAX_RESPONSE_BYTES = 4096;
  static final int MAX_REQUEST_BYTES = 2048;
  static final Duration LEASE = Duration.ofSeconds(20);
  private static final String POSTGRES_URL =
      System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
  private static final String POSTGRES_USER = System.getProperty("idem.test.postgres.user", "postgres");

  final HikariDataSource dataSource;
  /** The schema created for this service, or null. */
  private final String ownSchema;
  final JdbcIdempotencyStore store;
  final Idem idem;
  /** Stops the container. */
  private final AutoCloseable server;
  final int port;
  /** Provider charges per derived key. */
  final Map<String, AtomicInteger> charges = new ConcurrentHashMap<>();
  /** When set, the charge phase signals {@code entered} and waits for {@code release}. */
  volatile CountDownLatch chargeEntered;
  volatile CountDownLatch chargeRelease;
  /** When set, the charge phase fails, as a provider that is down. */
  volatile boolean chargeFails;
  /** Runs of the {@code /orders} handler per idempotency key, committed or rolled back. */
  static final Map<String, AtomicInteger> ORDER_RUNS = new ConcurrentHashMap<>();
  /** Runs of the phased payments' first phase (committed or rolled back), per idempotency key. */
  static final Map<String, AtomicInteger> PAYMENT_CREATES = new ConcurrentHashMap<>();
  /** Failed resumptions after which a payment's record becomes uncertain. */
  static final int RESUME_CAP = 3;

  /** On embedded Jetty. */
  TestService(String db, UnaryOperator<IdempotencyFilter.Builder> filterConfig) throws Exception {
    this(db, JETTY, filterConfig);
  }

  /** On embedded Jetty ({@link #JETTY}) or Tomcat ({@link #TOMCAT}). */
  TestService(String db, String container, UnaryOperator<IdempotencyFilter.Builder> filterConfig) throws Exception {
    this(db, container, Clock.systemUTC(), filterConfig);
  }

  /** On embedded Jetty ({@link #JETTY}) or Tomcat ({@link #TOMCAT}), the executor reading {@code clock}. */
  TestService(String db, String container, Clock clock, UnaryOperator<IdempotencyFilter.Builder> filterConfig)
      throws Exception {
    this(db, container, clock, b -> b, filterConfig);
  }

  /** As above, with {@code idemConfig} applied to the {@code Idem} builder last (encryption, say). */
  TestService(String db, String container, Clock clock, UnaryOperator<Idem.Builder> idemConfig,
      UnaryOperator<IdempotencyFilter.Builder> filterConfig) throws Exception {
    this(db, container, clock, idemConfig, List.of(), filterConfig);
  }

  /**
   * On embedded Jetty ({@link #JETTY}) or Tomcat ({@link #TOMCAT}), with {@code before} between the authentication
   * and the idempotency filter, in that order.
   */
  TestService(String db, String container, List<Filter> before, UnaryOperator<IdempotencyFilter.Builder> filterConfig)
      throws Exception {
    this(db, container, Clock.systemUTC(), b -> b, before, filterConfig);
  }

  private TestService(String db, String container, Clock clock, UnaryOperator<Idem.Builder> idemConfig,
      List<Filter> before, UnaryOperator<IdempotencyFilter.Builder> filterConfig) throws Exception {
    this.ownSchema = db.equals(DB_POSTGRES_OWN_SCHEMA)
        ? "servlet_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) : null;
    this.dataSource = open(db, ownSchema);
    createTables(db);
    this.store = JdbcIdempotencyStore.builder(dataSource).name("servlet-test-" + db).table("idem_servlet_record")
        .createSchemaIfMissing(true).build();
    OperationPolicy phasedPolicy = OperationPolicy.builder().lease(LEASE).resumeCap(RESUME_CAP, Duration.ofHours(24))
        .build();
    this.idem = idemConfig.apply(Idem.builder().name("servlet-test").store(store).clock(clock)
        .policy("POST /orders", OperationPolicy.builder().maxResponseBytes(MAX_RESPONSE_BYTES).build())
        .policy("POST /leased-orders", OperationPolicy.builder().maxResponseBytes(MAX_RESPONSE_BYTES).build())
        .policy("POST /payments", phasedPolicy)
        .policy("POST /payments-wait", phasedPolicy.toBuilder().waitInFlight(Duration.ofSeconds(30)).build())
        .phased(paymentsOperation("POST /payments"))
        .phased(paymentsOperation("POST /payments-wait")))
        .build();
    IdempotencyFilter filter = filterConfig.apply(IdempotencyFilter.builder(idem)
        .route(IdempotentRoute.atomic("POST", "/orders"))
        .route(IdempotentRoute.leased("POST", "/leased-orders"))
        .route(IdempotentRoute.phased("POST", "/payments"))
        .route(IdempotentRoute.phased("POST", "/payments-wait"))
        .route(IdempotentRoute.atomic("POST", "/notes").withKeyOptional())
        .maxRequestBytes(MAX_REQUEST_BYTES)).build();

    Map<String, HttpServlet> servlets = new LinkedHashMap<>();
    servlets.put("/orders", new Orders());
    servlets.put("/notes", new Orders());
    servlets.put("/leased-orders", new LeasedOrders());
    servlets.put("/payments", new Payments());
    servlets.put("/payments-wait", new Payments());
    List<Filter> filters = new ArrayList<>();
    filters.add(bearerAuth());
    filters.addAll(before);
    filters.add(filter);
    if (container.equals(TOMCAT)) {
      Tomcat tomcat = new Tomcat();
      tomcat.setBaseDir(Files.createTempDirectory("servlet-test-tomcat").toString());
      Connector connector = new Connector();
      connector.setProperty("address", "127.0.0.1");
      connector.setPort(0);
      tomcat.setConnector(connector);
      Context context = tomcat.addContext("", null);
      for (int i = 0; i < filters.size(); i++) {
        FilterDef def = new FilterDef();
        def.setFilterName("filter-" + i);
        def.setFilter(filters.get(i));
        context.addFilterDef(def);
        FilterMap map = new FilterMap();
        map.setFilterName("filter-" + i);
        map.addURLPattern("/*");
        context.addFilterMap(map);
      }
      servlets.forEach((path, servlet) -> {
        Tomcat.addServlet(context, path, servlet);
        context.addServletMappingDecoded(path, path);
      });
      tomcat.start();
      port = connector.getLocalPort();
      server = () -> {
        tomcat.stop();
        tomcat.destroy();
      };
    } else {
      Server jetty = new Server();
      ServerConnector connector = new ServerConnector(jetty);
      connector.setHost("127.0.0.1");
      connector.setPort(0);
      jetty.addConnector(connector);
      ServletContextHandler context = new ServletContextHandler("/");
      for (Filter f : filters) {
        context.addFilter(new FilterHolder(f), "/*", EnumSet.of(DispatcherType.REQUEST));
      }
      servlets.forEach((path, servlet) -> context.addServlet(new ServletHolder(servlet), path));
      jetty.setHandler(context);
      jetty.start();
      port = connector.getLocalPort();
      server = jetty::stop;
    }
  }

  String url(String path) {
    return "http://127.0.0.1:" + port + path;
  }

  private static HikariDataSource open(String db, String schema) {
    HikariConfig config = new HikariConfig();
    switch (db) {
      case DB_POSTGRES:
      case DB_POSTGRES_OWN_SCHEMA:
        String url = POSTGRES_URL;
        config.setUsername(POSTGRES_USER);
        if (schema != null) {
          onPostgres("CREATE SCHEMA " + schema);
          url += (url.contains("?") ? "&" : "?") + "currentSchema=" + schema;
        }
        config.setJdbcUrl(url);
        break;
      case DB_MARIADB:
        config.setJdbcUrl(System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test"));
        config.setUsername(System.getProperty("idem.test.mariadb.user", "root"));
        break;
      default:
        config.setJdbcUrl("jdbc:h2:mem:servlet-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        config.setUsername("sa");
    }
    config.setPassword("");
    config.setMaximumPoolSize(80);
    config.setConnectionTimeout(20_000);
    try {
      HikariDataSource ds = new HikariDataSource(config);
      ds.getConnection().close();
      return ds;
    } catch (RuntimeException | SQLException e) {
      throw new IllegalStateException(db + " is not reachable at " + config.getJdbcUrl() + ". Start it (bash .ci/run"
          + " does) and run the tests again; tests that need a database never skip.", e);
    }
  }

  private void createTables(String db) throws SQLException {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      String engine = db.equals(DB_MARIADB) ? " ENGINE=InnoDB" : "";
      st.execute("CREATE TABLE IF NOT EXISTS servlet_order (id VARCHAR(64) PRIMARY KEY, scope VARCHAR(255) NOT NULL,"
          + " idem_key VARCHAR(255) NOT NULL, body VARCHAR(4000) NOT NULL)" + engine);
      st.execute("CREATE TABLE IF NOT EXISTS servlet_payment (id VARCHAR(300) PRIMARY KEY,"
          + " scope VARCHAR(255) NOT NULL, status VARCHAR(20) NOT NULL)" + engine);
    }
  }

  private Filter bearerAuth() {
    return (req, res, chain) -> {
      HttpServletRequest http = (HttpServletRequest) req;
      String auth = http.getHeader("Authorization");
      if (auth == null) {
        chain.doFilter(req, res);
        return;
      }
      String tenant = auth.startsWith("Bearer ") ? auth.substring(7) : "";
      if (!tenant.equals("alice") && !tenant.equals("bob")) {
        Problem.of(401, "AUTH.unauthenticated", "Unknown API key").write((HttpServletResponse) res);
        return;
      }
      Principal principal = () -> tenant;
      chain.doFilter(new HttpServletRequestWrapper(http) {
        @Override
        public Principal getUserPrincipal() {
          return principal;
        }
      }, res);
    };
  }

  /** Rows the order handler committed for a scope and key. */
  int orders(String scope, String key) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM servlet_order WHERE scope = ? AND idem_key = ?")) {
      ps.setString(1, scope);
      ps.setString(2, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  int payments(String scope) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM servlet_payment WHERE scope = ?")) {
      ps.setString(1, scope);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  /**
   * The order handler. The body's {@code "mode"} picks the behaviour: {@code ok} (201, kept), {@code invalid} (400,
   * kept), {@code transient} (writes a row, then 503: rolled back, not kept), {@code throw} (writes a row, then
   * throws), {@code wrapped-store} (writes a row, then throws a store failure inside a framework's wrapper, two
   * levels deep), {@code big} (a body over the kept limit). A created order's answer sets two cookies: {@code session}
   * (a {@code Set-Cookie} header) and {@code order} ({@code addCookie}).
   */
  private static final class Orders extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      resp.setContentType("application/json");
      resp.getWriter().write("{\"orders\":[]}");
    }

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      // the raw header: Jetty's getContentType() throws on a charset it does not know, and the fuzz test sends such
      // requests past the filter (a key-optional route without a key), where only the handler would answer them
      String contentType = req.getHeader("Content-Type");
      if (contentType != null && contentType.startsWith("application/x-www-form-urlencoded")) {
        String form;
        try {
          form = "item=" + req.getParameter("item") + " qty=" + req.getParameter("qty");
        } catch (IllegalStateException | IllegalArgumentException e) {
          // Tomcat refuses a form it cannot decode (an unknown charset, a broken escape) on the first read
          Problem.of(400, "VALIDATION.body", "Invalid body").withDetail("the form cannot be decoded").write(resp);
          return;
        }
        resp.setStatus(201);
        resp.setContentType("text/plain;charset=UTF-8");
        resp.getWriter().write(form);
        return;
      }
      String body = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      IdempotentExchange exchange = IdempotentExchange.find(req).orElse(null);
      if (body.indexOf('\0') >= 0) {
        // as an application on PostgreSQL must: it refuses a NUL in text, and the handler writes the body as text
        Problem.of(400, "VALIDATION.body", "Invalid body").withDetail("the body holds a NUL character").write(resp);
        return;
      }
      if (body.contains("\"mode\":\"senderror\"")) {
        resp.sendError(404, "internal detail: db host 10.0.0.7");
        return;
      }
      if (body.contains("\"mode\":\"invalid\"")) {
        Problem.of(400, "VALIDATION.qty", "Invalid quantity").withDetail("qty must be positive").write(resp);
        return;
      }
      String id = "ord_" + UUID.randomUUID();
      if (exchange != null) {
        ORDER_RUNS.computeIfAbsent(exchange.key().value(), k -> new AtomicInteger()).incrementAndGet();
        Connection c = JdbcTransaction.connectionOf(exchange.transaction());
        try (PreparedStatement ps = c.prepareStatement(
            "INSERT INTO servlet_order (id, scope, idem_key, body) VALUES (?, ?, ?, ?)")) {
          ps.setString(1, id);
          ps.setString(2, exchange.scope().value());
          ps.setString(3, exchange.key().value());
          ps.setString(4, body);
          ps.executeUpdate();
        } catch (SQLException e) {
          throw new IOException(e);
        }
      }
      if (body.contains("\"mode\":\"transient\"")) {
        Problem.of(503, "DEPENDENCY.unavailable", "Try again").withRetryable(true).write(resp);
        return;
      }
      if (body.contains("\"mode\":\"throw\"")) {
        throw new IllegalStateException("handler failed after its write");
      }
      if (body.contains("\"mode\":\"wrapped-store\"")) {
        throw new WrapperException(new RuntimeException("a framework's second wrapper",
            new StoreException("servlet-test", "the store went away during the handler", null)));
      }
      resp.setStatus(201);
      resp.setContentType("application/json");
      resp.setHeader("Location", "/orders/" + id);
      resp.addHeader("Set-Cookie", "session=secret-" + id);
      Cookie order = new Cookie("order", id);
      order.setPath("/orders");
      order.setHttpOnly(true);
      order.setAttribute("SameSite", "Lax");
      resp.addCookie(order);
      resp.setHeader("X-Trace", UUID.randomUUID().toString());
      if (body.contains("\"mode\":\"big\"")) {
        resp.getOutputStream().write(new byte[MAX_RESPONSE_BYTES + 1]);
        return;
      }
      resp.getOutputStream().write(("{\"id\":\"" + id + "\",\"request\":" + body + "}")
          .getBytes(StandardCharsets.UTF_8));
    }
  }

  /** Runs of the leased {@code /leased-orders} handler per idempotency key. */
  static final Map<String, AtomicInteger> LEASED_RUNS = new ConcurrentHashMap<>();

  /**
   * A leased handler (no transaction: its effect stays whatever happens next), counting its runs per key. The body's
   * {@code "mode"}: {@code big} (a body over the kept limit, through the output stream), {@code big-writer} (the same
   * through a writer, which swallows the failure), otherwise 201.
   */
  private static final class LeasedOrders extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      String body = new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      LEASED_RUNS.computeIfAbsent(IdempotentExchange.current(req).key().value(), k -> new AtomicInteger())
          .incrementAndGet();
      resp.setStatus(201);
      resp.setContentType("application/json");
      if (body.contains("\"mode\":\"big\"")) {
        resp.getOutputStream().write(new byte[MAX_RESPONSE_BYTES + 1]);
        return;
      }
      if (body.contains("\"mode\":\"big-writer\"")) {
        resp.getWriter().write("x".repeat(MAX_RESPONSE_BYTES + 1));
        return;
      }
      resp.getWriter().write("{\"ok\":true}");
    }
  }

  private static final class Payments extends HttpServlet {
    private static final long serialVersionUID = 1L;

    @Override
    protected void doPost(HttpServletRequest req, HttpServletResponse resp) throws IOException {
      IdempotentExchange.current(req).phased(resp);
    }
  }

  private PhasedOperation paymentsOperation(String operation) {
    return PhasedOperation.builder(operation)
        .inTransaction("create", ctx -> {
          PAYMENT_CREATES.computeIfAbsent(ctx.key().value(), k -> new AtomicInteger()).incrementAndGet();
          String id = "pay_" + ctx.derivedKey("payment");
          Connection c = JdbcTransaction.connectionOf(ctx.transaction());
          try (PreparedStatement ps = c.prepareStatement(
              "INSERT INTO servlet_payment (id, scope, status) VALUES (?, ?, 'pending')")) {
            ps.setString(1, id);
            ps.setString(2, ctx.recordKey().scope().value());
            ps.executeUpdate();
          }
          return PhaseResult.next(Checkpoint.empty().with("payment_id", id));
        })
        .outside("charge", ctx -> {
          CountDownLatch entered = chargeEntered;
          CountDownLatch release = chargeRelease;
          if (entered != null && release != null) {
            entered.countDown();
            if (!release.await(60, TimeUnit.SECONDS)) {
              throw new IllegalStateException("the test never released the charge");
            }
          }
          if (chargeFails) {
            throw new IllegalStateException("the provider is down");
          }
          String chargeKey = ctx.derivedKey("charge");
          int n = charges.computeIfAbsent(chargeKey, k -> new AtomicInteger()).incrementAndGet();
          return PhaseResult.next(ctx.checkpoint().with("charge_id", "ch_" + n + "_" + chargeKey.hashCode()));
        })
        .inTransaction("capture", ctx -> {
          String id = ctx.checkpoint().require("payment_id");
          Connection c = JdbcTransaction.connectionOf(ctx.transaction());
          try (PreparedStatement ps = c.prepareStatement("UPDATE servlet_payment SET status = 'captured' WHERE id = ?")) {
            ps.setString(1, id);
            ps.executeUpdate();
          }
          return PhaseResult.respond(StoredResponse.of(201, Map.of("Content-Type", java.util.List.of("application/json"),
              "Location", java.util.List.of("/payments/" + id)),
              ("{\"id\":\"" + id + "\",\"status\":\"captured\"}").getBytes(StandardCharsets.UTF_8)));
        })
        .build();
  }

  private static void onPostgres(String sql) {
    try (Connection c = DriverManager.getConnection(POSTGRES_URL, POSTGRES_USER, "");
        Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot run '" + sql + "' on " + POSTGRES_URL + " (is the server running?"
          + " tests never skip): " + e.getMessage(), e);
    }
  }

  @Override
  public void close() throws Exception {
    server.close();
    dataSource.close();
    if (ownSchema != null) {
      onPostgres("DROP SCHEMA " + ownSchema + " CASCADE");
    }
  }

  /** Stands for a web framework's own exception type wrapping what a handler threw. */
  static final class WrapperException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    WrapperException(Throwable cause) {
      super("request processing failed", cause);
    }
  }
}
