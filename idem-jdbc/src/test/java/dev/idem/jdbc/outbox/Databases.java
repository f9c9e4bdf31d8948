package dev.idem.jdbc.outbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.Map;
import java.util.UUID;

/**
 * The real databases the tests run on. PostgreSQL and MariaDB come from system properties (set by the build, see the
 * parent pom) and must be reachable: a test that cannot connect fails, it never skips. H2 is in memory.
 */
public final class Databases {
  private static final Map<JdbcDialect, HikariDataSource> POOLS = new EnumMap<>(JdbcDialect.class);

  private Databases() {}

  private static final Map<JdbcDialect, HikariDataSource> NO_AUTO_COMMIT = new EnumMap<>(JdbcDialect.class);

  public static synchronized HikariDataSource pool(JdbcDialect dialect) {
    return POOLS.computeIfAbsent(dialect, Databases::open);
  }

  /** A pool whose connections start with auto-commit off, as Spring applications often configure. */
  static synchronized HikariDataSource poolWithoutAutoCommit(JdbcDialect dialect) {
    pool(dialect);
    return NO_AUTO_COMMIT.computeIfAbsent(dialect, d -> {
      HikariConfig config = new HikariConfig();
      config.setJdbcUrl(d == JdbcDialect.H2 ? POOLS.get(d).getJdbcUrl() : url(d));
      config.setUsername(user(d));
      config.setPassword("");
      config.setMaximumPoolSize(24);
      config.setAutoCommit(false);
      config.setPoolName("test-no-autocommit-" + d.name().toLowerCase());
      return new HikariDataSource(config);
    });
  }

  public static String url(JdbcDialect dialect) {
    switch (dialect) {
      case POSTGRESQL:
        return System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
      case MARIADB:
        return System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test");
      default:
        return "jdbc:h2:mem:idem-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
    }
  }

  public static String user(JdbcDialect dialect) {
    switch (dialect) {
      case POSTGRESQL:
        return System.getProperty("idem.test.postgres.user", "postgres");
      case MARIADB:
        return System.getProperty("idem.test.mariadb.user", "root");
      default:
        return "sa";
    }
  }

  private static HikariDataSource open(JdbcDialect dialect) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url(dialect));
    config.setUsername(user(dialect));
    config.setPassword("");
    config.setMaximumPoolSize(24);
    config.setConnectionTimeout(10_000);
    config.setPoolName("test-" + dialect.name().toLowerCase());
    try {
      HikariDataSource ds = new HikariDataSource(config);
      try (Connection c = ds.getConnection()) {
        c.isValid(5);
      }
      return ds;
    } catch (RuntimeException | SQLException e) {
      throw new IllegalStateException(dialect + " is not reachable at " + url(dialect) + " as " + user(dialect)
          + ". Start it (bash .ci/run does) and run the tests again; tests that need a database never skip.", e);
    }
  }

  /**
   * A fresh set of tables (an outbox, its history and an inbox), so that tests never see each other's rows: dropped,
   * then created by the stores' {@code createSchemaIfMissing}.
   *
   * @return the outbox table
   */
  public static String freshTables(JdbcDialect dialect, String outbox, String inbox) {
    try (Connection c = pool(dialect).getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + outbox + "_attempt");
      st.execute("DROP TABLE IF EXISTS " + outbox);
      st.execute("DROP TABLE IF EXISTS " + inbox);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    JdbcOutboxStore.builder(pool(dialect)).dialect(dialect).table(outbox).createSchemaIfMissing(true).build();
    JdbcInboxStore.builder(pool(dialect)).dialect(dialect).table(inbox).createSchemaIfMissing(true).build();
    return outbox;
  }
}
