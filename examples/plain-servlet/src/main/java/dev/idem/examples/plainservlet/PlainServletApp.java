package dev.idem.examples.plainservlet;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Idem;
import dev.idem.core.OperationPolicy;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.servlet.IdempotencyFilter;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.servlet.spi.ScopeResolver;
import jakarta.servlet.DispatcherType;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import javax.sql.DataSource;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * The idempotency filter in a plain Jetty 12 (EE 11) application, with the JDBC store and no framework:
 *
 * <ul>
 *   <li>{@code POST /orders} (atomic): the handler inserts an order row on the store's transaction, so the row and
 *       the idempotency record commit together, or neither does;
 *   <li>{@code POST /shipments} (phased): a row, then a call to a (simulated, slow) carrier outside any transaction,
 *       then the booking; a duplicate sent during the carrier call gets 409 {@code in_progress};
 *   <li>{@code GET /orders}, {@code GET /orders/{id}}: read-only, untouched by the filter.
 * </ul>
 *
 * The scope of every key is the {@value #TENANT_HEADER} header, which a trusted gateway in front of the service
 * sets after authenticating the caller. Run {@code java -jar target/plain-servlet.jar --help} for the options.
 */
public final class PlainServletApp implements AutoCloseable {
  /** The header that names the tenant: the scope of the idempotency keys. */
  public static final String TENANT_HEADER = "X-Tenant";
  /** The H2 file database used when no JDBC URL is given. */
  public static final String DEFAULT_DB_URL = "jdbc:h2:./data/plain-servlet";

  private final HikariDataSource dataSource;
  private final Server server;
  private final int port;

  /**
   * What the application needs to start.
   *
   * @param host the address to listen on
   * @param port the port; 0 picks a free one
   * @param dbUrl a JDBC URL: H2 or PostgreSQL
   * @param dbUser the database user, or null
   * @param dbPassword the database password, or null
   * @param carrier the carrier that books shipments
   */
  public record Settings(String host, int port, String dbUrl, String dbUser, String dbPassword, Carrier carrier) {
    public Settings {
      Objects.requireNonNull(host, "host");
      Objects.requireNonNull(dbUrl, "dbUrl");
      Objects.requireNonNull(carrier, "carrier");
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port must be 0..65535, got " + port);
      }
    }

    /** Listens on 127.0.0.1:{@code port} with the default H2 database and a carrier that answers in 5 s. */
    public static Settings defaults(int port) {
      return new Settings("127.0.0.1", port, DEFAULT_DB_URL, null, null, Carrier.simulated(Duration.ofSeconds(5)));
    }

    public Settings withDb(String url, String user, String password) {
      return new Settings(host, port, url, user, password, carrier);
    }

    public Settings withCarrier(Carrier c) {
      return new Settings(host, port, dbUrl, dbUser, dbPassword, c);
    }
  }

  private PlainServletApp(Settings settings) throws Exception {
    this.dataSource = open(settings);
    try {
      createTables(dataSource);
      JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).name("plain-servlet")
          .createSchemaIfMissing(true).build();
      Idem idem = Idem.builder().name("plain-servlet").store(store)
          .policy(Shipments.OPERATION, OperationPolicy.builder().lease(Duration.ofSeconds(30)).build())
          .phased(Shipments.operation(settings.carrier()))
          .build();
      IdempotencyFilter filter = IdempotencyFilter.builder(idem)
          .route(IdempotentRoute.atomic("POST", "/orders"))
          .route(IdempotentRoute.phased("POST", "/shipments"))
          .scope(ScopeResolver.header(TENANT_HEADER))
          .build();

      server = new Server();
      ServerConnector connector = new ServerConnector(server);
      connector.setHost(settings.host());
      connector.setPort(settings.port());
      server.addConnector(connector);
      ServletContextHandler context = new ServletContextHandler("/");
      context.addFilter(new FilterHolder(filter), "/*", EnumSet.of(DispatcherType.REQUEST));
      OrdersServlet orders = new OrdersServlet(dataSource);
      context.addServlet(new ServletHolder(orders), "/orders");
      context.addServlet(new ServletHolder(orders), "/orders/*");
      context.addServlet(new ServletHolder(new Shipments.Servlet()), "/shipments");
      server.setHandler(context);
      server.start();
      port = connector.getLocalPort();
    } catch (Exception | Error e) {
      dataSource.close();
      throw e;
    }
  }

  /** Opens the database, creates the tables if missing and starts Jetty; {@link #close()} stops both. */
  public static PlainServletApp start(Settings settings) throws Exception {
    return new PlainServletApp(settings);
  }

  /** The port Jetty listens on (the chosen one when the settings asked for 0). */
  public int port() {
    return port;
  }

  /** The application's connection pool. */
  public DataSource dataSource() {
    return dataSource;
  }

  @Override
  public void close() throws Exception {
    try {
      server.stop();
    } finally {
      dataSource.close();
    }
  }

  private static HikariDataSource open(Settings settings) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(settings.dbUrl());
    if (settings.dbUser() != null) {
      config.setUsername(settings.dbUser());
    }
    if (settings.dbPassword() != null) {
      config.setPassword(settings.dbPassword());
    }
    // A duplicate in atomic mode reads the winner's record on a second connection after its own rolled back.
    config.setMaximumPoolSize(32);
    config.setPoolName("plain-servlet");
    return new HikariDataSource(config);
  }

  private static void createTables(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS example_order (id VARCHAR(64) PRIMARY KEY,"
          + " tenant VARCHAR(255) NOT NULL, idem_key VARCHAR(255) NOT NULL, body VARCHAR(4000) NOT NULL)");
      st.execute("CREATE TABLE IF NOT EXISTS example_shipment (id VARCHAR(64) PRIMARY KEY,"
          + " tenant VARCHAR(255) NOT NULL, body VARCHAR(4000) NOT NULL, status VARCHAR(16) NOT NULL,"
          + " tracking VARCHAR(64))");
    }
  }

  /**
   * Starts the application and runs until the process is stopped. Options: {@code --port N} (8080), {@code --host
   * ADDRESS} (127.0.0.1), {@code --db JDBC_URL} (or {@code IDEM_DB_URL}; an H2 file under {@code ./data} by
   * default), {@code --db-user} / {@code --db-password} (or {@code IDEM_DB_USER} / {@code IDEM_DB_PASSWORD}),
   * {@code --carrier-delay SECONDS} (5).
   */
  public static void main(String[] args) throws Exception {
    Settings settings;
    try {
      settings = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.err.println(USAGE);
      System.exit(2);
      return;
    }
    if (settings == null) {
      System.out.println(USAGE);
      return;
    }
    PlainServletApp app = start(settings);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      try {
        app.close();
      } catch (Exception e) {
        e.printStackTrace();
      }
    }, "plain-servlet-shutdown"));
    System.out.println("plain-servlet listening on http://" + settings.host() + ":" + app.port() + " (database "
        + settings.dbUrl() + "); POST /orders and POST /shipments need Idempotency-Key and " + TENANT_HEADER);
    app.server.join();
  }

  static final String USAGE = "usage: PlainServletApp [--port N] [--host ADDRESS] [--db JDBC_URL]"
      + " [--db-user USER] [--db-password PASSWORD] [--carrier-delay SECONDS]\n"
      + "  environment: IDEM_DB_URL, IDEM_DB_USER, IDEM_DB_PASSWORD (the options win)";

  /** The settings the command line and the environment ask for; null for {@code --help}. */
  static Settings parse(String[] args) {
    String host = "127.0.0.1";
    int port = 8080;
    String db = System.getenv("IDEM_DB_URL");
    String user = System.getenv("IDEM_DB_USER");
    String password = System.getenv("IDEM_DB_PASSWORD");
    long delay = 5;
    for (int i = 0; i < args.length; i++) {
      String option = args[i];
      if (option.equals("--help") || option.equals("-h")) {
        return null;
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(option + " needs a value");
      }
      String value = args[++i];
      switch (option) {
        case "--port" -> port = Integer.parseInt(value);
        case "--host" -> host = value;
        case "--db" -> db = value;
        case "--db-user" -> user = value;
        case "--db-password" -> password = value;
        case "--carrier-delay" -> delay = Long.parseLong(value);
        default -> throw new IllegalArgumentException("unknown option " + option);
      }
    }
    if (delay < 0) {
      throw new IllegalArgumentException("--carrier-delay must not be negative");
    }
    return new Settings(host, port, db == null || db.isBlank() ? DEFAULT_DB_URL : db, user, password,
        Carrier.simulated(Duration.ofSeconds(delay)));
  }
}
