package dev.idem.outbox;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.outbox.internal.OutboxSchema;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * PostgreSQL for the tests of modules built on the outbox (the broker transports and consumers), shared through
 * this module's test jar: outbox, inbox and effect tables under names of the test's choosing. The database must be
 * reachable: a test that cannot connect fails, it never skips.
 */
public final class TestPostgres {
  private TestPostgres() {}

  /** The shared PostgreSQL pool of the outbox tests ({@link Databases#pool}). */
  public static HikariDataSource postgres() {
    return Databases.pool(JdbcDialect.POSTGRESQL);
  }

  /** Creates the outbox, attempt history and inbox tables under these names, and an effect table. */
  public static void create(String outbox, String inbox, String effects) {
    try (Connection c = postgres().getConnection(); Statement st = c.createStatement()) {
      OutboxSchema.create(c, JdbcDialect.POSTGRESQL, outbox, inbox);
      // an auto-increment key, not the event id: a duplicate effect must show up as a second row
      st.execute("CREATE TABLE " + effects + " (id BIGSERIAL PRIMARY KEY, event_id VARCHAR(64) NOT NULL)");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  public static void drop(String... tables) {
    try (Connection c = postgres().getConnection(); Statement st = c.createStatement()) {
      for (String t : tables) {
        st.execute("DROP TABLE IF EXISTS " + t);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

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
