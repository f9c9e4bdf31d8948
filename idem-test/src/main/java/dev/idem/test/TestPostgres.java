package dev.idem.test;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * A real PostgreSQL for tests, and an <em>effect table</em> that counts what a consumer did: one row per effect, so
 * that a duplicate effect shows up as a second row. The server comes from the system properties
 * {@code idem.test.postgres.url} (default {@code jdbc:postgresql://127.0.0.1:5432/test}) and
 * {@code idem.test.postgres.user} (default {@code postgres}), with an empty password. It must be reachable: a test
 * that cannot connect fails, it never skips. Needs HikariCP and the PostgreSQL driver on the test classpath.
 *
 * <p>Table names are the test's own and are written into SQL as they are: pass only names the test made up.
 */
public final class TestPostgres {
  private static HikariDataSource pool;

  private TestPostgres() {}

  /** The JDBC URL of the test server. */
  public static String url() {
    return System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
  }

  /** The user the tests connect as. */
  public static String user() {
    return System.getProperty("idem.test.postgres.user", "postgres");
  }

  /** The shared pool (24 connections), opened on first use; fails with a clear message when the server is away. */
  public static synchronized HikariDataSource postgres() {
    if (pool == null) {
      HikariConfig config = new HikariConfig();
      config.setJdbcUrl(url());
      config.setUsername(user());
      config.setPassword("");
      config.setMaximumPoolSize(24);
      config.setConnectionTimeout(10_000);
      config.setPoolName("idem-test-postgres");
      try {
        HikariDataSource ds = new HikariDataSource(config);
        try (Connection c = ds.getConnection()) {
          if (!c.isValid(5)) {
            ds.close();
            throw new SQLException("the first connection did not answer within 5 s");
          }
        }
        pool = ds;
      } catch (RuntimeException | SQLException e) {
        throw new IllegalStateException("PostgreSQL is not reachable at " + url() + " as " + user()
            + ". Start it and run the tests again; tests that need a database never skip.", e);
      }
    }
    return pool;
  }

  /** A small pool of its own on {@code url} as {@code user} (empty password), for a child JVM of a crash test. */
  public static HikariDataSource pool(String url, String user, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword("");
    config.setMaximumPoolSize(size);
    return new HikariDataSource(config);
  }

  /** Creates an effect table: an auto-increment key (not the event id) and the event id of each effect. */
  public static void createEffectTable(String effects) {
    execute("CREATE TABLE " + effects + " (id BIGSERIAL PRIMARY KEY, event_id VARCHAR(64) NOT NULL)");
  }

  /** Drops these tables where they exist. */
  public static void drop(String... tables) {
    try (Connection c = postgres().getConnection(); Statement st = c.createStatement()) {
      for (String t : tables) {
        st.execute("DROP TABLE IF EXISTS " + t);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Runs one statement of the test's own on a pooled connection. */
  public static void execute(String sql) {
    try (Connection c = postgres().getConnection(); Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Records one effect of {@code eventId} on the consumer's transaction. */
  public static void insertEffect(Connection c, String effects, String eventId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " (event_id) VALUES (?)")) {
      ps.setString(1, eventId);
      ps.executeUpdate();
    }
  }

  /**
   * Whether inbox table {@code inbox} holds the record of ({@code consumer}, {@code eventId}) as the transaction of
   * {@code c} sees it: in a handler, true when the inbox recorded the event before the handler ran (the usual order),
   * false in the first-delivery order.
   */
  public static boolean inboxRecorded(Connection c, String inbox, String consumer, String eventId)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + inbox
        + " WHERE consumer = ? AND event_id = ?")) {
      ps.setString(1, consumer);
      ps.setString(2, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1) == 1;
      }
    }
  }

  /** The first column of the first row of a query of the test's own, such as {@code SELECT COUNT(*) FROM t}. */
  public static long count(String sql) {
    try (Connection c = postgres().getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** How many effects the effect table holds. */
  public static long effectCount(String effects) {
    return count("SELECT COUNT(*) FROM " + effects);
  }

  /** How many effects the effect table holds for {@code eventId}. */
  public static long effectCount(String effects, String eventId) {
    try (Connection c = postgres().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + effects + " WHERE event_id = ?")) {
      ps.setString(1, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  /** How many event ids have more than one effect. */
  public static long eventsWithSeveralEffects(String effects) {
    return count("SELECT COUNT(*) FROM (SELECT event_id FROM " + effects + " GROUP BY event_id HAVING COUNT(*) > 1) d");
  }

  /** The event id of every effect, one per row. */
  public static List<String> effectIds(String effects) {
    List<String> ids = new ArrayList<>();
    try (Connection c = postgres().getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT event_id FROM " + effects);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        ids.add(rs.getString(1));
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    return ids;
  }
}
