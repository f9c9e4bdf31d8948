package dev.idem.jdbc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.EnumMap;
import java.util.Map;
import java.util.UUID;

/**
 * The real databases the tests run on. PostgreSQL and MariaDB come from system properties (set by the build, see the
 * parent pom) and must be reachable: a test that cannot connect fails, it never skips. H2 is in memory. Public for
 * the contract kits' runners in {@code dev.idem.jdbc.kit}.
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

  static String url(JdbcDialect dialect) {
    switch (dialect) {
      case POSTGRESQL:
        return System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
      case MARIADB:
        return System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test");
      default:
        return "jdbc:h2:mem:idem-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
    }
  }

  static String user(JdbcDialect dialect) {
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
      try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
        st.execute(dialect == JdbcDialect.POSTGRESQL
            ? "CREATE TABLE IF NOT EXISTS idem_test_effect (id BIGSERIAL PRIMARY KEY, marker VARCHAR(400) NOT NULL)"
            : dialect == JdbcDialect.MARIADB
                ? "CREATE TABLE IF NOT EXISTS idem_test_effect (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
                    + " marker VARCHAR(400) NOT NULL, INDEX (marker)) ENGINE=InnoDB"
                : "CREATE TABLE IF NOT EXISTS idem_test_effect (id BIGINT AUTO_INCREMENT PRIMARY KEY,"
                    + " marker VARCHAR(400) NOT NULL)");
        st.execute("CREATE TABLE IF NOT EXISTS idem_test_unique_effect (id VARCHAR(400) PRIMARY KEY)");
        if (dialect == JdbcDialect.POSTGRESQL) {
          st.execute("CREATE INDEX IF NOT EXISTS idem_test_effect_marker ON idem_test_effect (marker)");
        } else if (dialect == JdbcDialect.H2) {
          st.execute("CREATE INDEX IF NOT EXISTS idem_test_effect_marker ON idem_test_effect (marker)");
        }
      }
      return ds;
    } catch (RuntimeException | SQLException e) {
      throw new IllegalStateException(dialect + " is not reachable at " + url(dialect) + " as " + user(dialect)
          + ". Start it (bash .ci/run does) and run the tests again; tests that need a database never skip.", e);
    }
  }

  static JdbcIdempotencyStore store(JdbcDialect dialect) {
    return JdbcIdempotencyStore.builder(pool(dialect)).name(dialect.name().toLowerCase())
        .createSchemaIfMissing(true).build();
  }

  static void insertEffect(Connection c, String marker) throws SQLException {
    try (var ps = c.prepareStatement("INSERT INTO idem_test_effect (marker) VALUES (?)")) {
      ps.setString(1, marker);
      ps.executeUpdate();
    }
  }

  static void insertUniqueEffect(Connection c, String id) throws SQLException {
    try (var ps = c.prepareStatement("INSERT INTO idem_test_unique_effect (id) VALUES (?)")) {
      ps.setString(1, id);
      ps.executeUpdate();
    }
  }

  /** Rows tagged {@code marker} plus the row whose natural key is {@code marker}. */
  static int countEffects(JdbcDialect dialect, String marker) throws SQLException {
    try (Connection c = pool(dialect).getConnection();
        var ps = c.prepareStatement("SELECT (SELECT COUNT(*) FROM idem_test_effect WHERE marker = ?)"
            + " + (SELECT COUNT(*) FROM idem_test_unique_effect WHERE id = ?)")) {
      ps.setString(1, marker);
      ps.setString(2, marker);
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
