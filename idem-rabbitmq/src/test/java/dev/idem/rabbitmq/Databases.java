package dev.idem.rabbitmq;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.outbox.internal.OutboxSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The PostgreSQL the tests run on, from the system properties the build sets (see the parent pom). It must be
 * reachable: a test that cannot connect fails, it never skips.
 */
final class Databases {
  private static HikariDataSource pool;

  private Databases() {}

  static synchronized HikariDataSource postgres() {
    if (pool == null) {
      pool = open();
    }
    return pool;
  }

  private static HikariDataSource open() {
    String url = System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
    String user = System.getProperty("idem.test.postgres.user", "postgres");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword("");
    config.setMaximumPoolSize(12);
    config.setConnectionTimeout(10_000);
    config.setPoolName("test-postgresql-rabbitmq");
    try {
      HikariDataSource ds = new HikariDataSource(config);
      try (Connection c = ds.getConnection()) {
        c.isValid(5);
      }
      return ds;
    } catch (RuntimeException | SQLException e) {
      throw new IllegalStateException("PostgreSQL is not reachable at " + url + " as " + user
          + ". Start it (bash .ci/run does) and run the tests again; tests that need a database never skip.", e);
    }
  }

  /** Creates the outbox, attempt history and inbox tables under these names, and an effect table. */
  static void create(String outbox, String inbox, String effects) {
    try (Connection c = postgres().getConnection(); Statement st = c.createStatement()) {
      OutboxSchema.create(c, JdbcDialect.POSTGRESQL, outbox, inbox);
      // an auto-increment key, not the event id: a duplicate effect must show up as a second row
      st.execute("CREATE TABLE " + effects + " (id BIGSERIAL PRIMARY KEY, event_id VARCHAR(64) NOT NULL)");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  static void drop(String... tables) {
    try (Connection c = postgres().getConnection(); Statement st = c.createStatement()) {
      for (String t : tables) {
        st.execute("DROP TABLE IF EXISTS " + t);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  static void execute(String sql) {
    try (Connection c = postgres().getConnection(); Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Records one effect of {@code eventId} on the consumer's transaction. */
  static void insertEffect(Connection c, String effects, String eventId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " (event_id) VALUES (?)")) {
      ps.setString(1, eventId);
      ps.executeUpdate();
    }
  }

  static long count(String sql) {
    try (Connection c = postgres().getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
