package dev.idem.jdbc.kit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.jdbc.Databases;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;

/**
 * The JDBC stores the contract kits run on: each on tables of its own, named at random (the databases are shared and
 * keep what earlier runs left), created by the store's builder and dropped after the test. For the inbox kit's
 * waiting tests, the database's own view of lock waits.
 */
final class KitStores {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private KitStores() {}

  static JdbcOutboxStore outbox(JdbcDialect dialect) {
    return JdbcOutboxStore.builder(Databases.pool(dialect)).dialect(dialect).table(table("kit_ob_"))
        .createSchemaIfMissing(true).build();
  }

  static JdbcInboxStore inbox(JdbcDialect dialect) {
    return JdbcInboxStore.builder(Databases.pool(dialect)).dialect(dialect).table(table("kit_ib_"))
        .createSchemaIfMissing(true).build();
  }

  private static String table(String prefix) {
    return prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
  }

  static void drop(JdbcOutboxStore store) throws SQLException {
    if (store != null) {
      drop(store.dataSource(), store.table() + "_attempt", store.table());
    }
  }

  static void drop(JdbcInboxStore store) throws SQLException {
    if (store != null) {
      drop(store.dataSource(), store.table());
    }
  }

  private static void drop(DataSource dataSource, String... tables) throws SQLException {
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      for (String table : tables) {
        st.execute("DROP TABLE IF EXISTS " + table);
      }
    }
  }

  /** The database's id of the session of {@code tx}: what the lock views name it by. */
  static long session(JdbcDialect dialect, StoreTransaction tx) throws SQLException {
    String sql = dialect == JdbcDialect.POSTGRESQL ? "SELECT pg_backend_pid()"
        : dialect == JdbcDialect.MARIADB ? "SELECT CONNECTION_ID()" : "SELECT SESSION_ID()";
    try (Statement st = tx.unwrap(Connection.class).createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * Polls the database (bounded by a deadline) until session {@code waiter} is blocked on {@code eventId}, which
   * session {@code holder} recorded and has not committed; fails if {@code work}, the waiter's work, ends first.
   */
  static void awaitBlocked(JdbcInboxStore store, Object holder, Object waiter, String eventId, Future<?> work)
      throws SQLException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    try (Connection c = store.dataSource().getConnection()) {
      while (!blocked(store, c, (Long) holder, (Long) waiter, eventId)) {
        assertThat(work.isDone()).as("session %s ended without waiting for %s", waiter, eventId).isFalse();
        assertThat(System.nanoTime()).as("session %s never waited for %s", waiter, eventId).isLessThan(deadline);
        LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
      }
    }
  }

  /**
   * Whether session {@code waiter} is blocked on {@code eventId} of session {@code holder}.
   *
   * <ul>
   *   <li>PostgreSQL: {@code pg_blocking_pids(waiter)} lists the holder.</li>
   *   <li>MariaDB: the waiter's transaction is in {@code LOCK WAIT} in the live {@code SHOW ENGINE INNODB STATUS}
   *       ({@code information_schema.INNODB_TRX} is a cache that a tight poll keeps stale). It does not name the
   *       holder; nothing else touches the test's table.</li>
   *   <li>H2: a key held by an uncommitted insert is no lock with a queue ({@code BLOCKER_ID} stays null): H2 retries
   *       the insert until the holder ends. So: the waiter is executing the insert of {@code eventId}, which cannot
   *       end while the holder holds it; or {@code BLOCKER_ID} is the holder.</li>
   * </ul>
   */
  private static boolean blocked(JdbcInboxStore store, Connection c, long holder, long waiter, String eventId)
      throws SQLException {
    switch (store.dialect()) {
      case POSTGRESQL:
        try (PreparedStatement ps = c.prepareStatement("SELECT CAST(? AS INTEGER) = ANY(pg_blocking_pids(?))")) {
          ps.setLong(1, holder);
          ps.setInt(2, Math.toIntExact(waiter));
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
          }
        }
      case MARIADB:
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW ENGINE INNODB STATUS")) {
          rs.next();
          for (String transaction : rs.getString("Status").split("---TRANSACTION ")) {
            if (transaction.contains("\nLOCK WAIT ") && transaction.contains("MariaDB thread id " + waiter + ",")) {
              return true;
            }
          }
          return false;
        }
      default:
        try (PreparedStatement ps = c.prepareStatement(
            "SELECT BLOCKER_ID, EXECUTING_STATEMENT FROM INFORMATION_SCHEMA.SESSIONS WHERE SESSION_ID = ?")) {
          ps.setLong(1, waiter);
          try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              return false;
            }
            long blocker = rs.getLong(1);
            boolean byHolder = !rs.wasNull() && blocker == holder;
            String executing = rs.getString(2);
            return byHolder || executing != null && executing.startsWith("INSERT INTO " + store.table() + " ")
                && executing.contains("2: '" + eventId + "'");
          }
        }
    }
  }
}
