package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import dev.idem.test.Eventually;
import org.junit.jupiter.api.Test;

/** The schema lock on PostgreSQL, with a {@code CREATE INDEX CONCURRENTLY} run under it by another instance. */
class SchemaLockTest {
  private final DataSource pool = Databases.pool(JdbcDialect.POSTGRESQL);
  private final String table = "lock_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);

  /**
   * An instance that runs {@code CREATE INDEX CONCURRENTLY} under the lock while another instance waits for it: the
   * index build waits for every transaction with an older snapshot, so a waiter that held one inside
   * {@code pg_advisory_lock} made the two deadlock (SQLState 40P01), and one instance failed to start.
   */
  @Test
  void anIndexBuiltConcurrentlyUnderTheLockDoesNotDeadlockWithAnInstanceWaitingForIt() throws Exception {
    ExecutorService other = Executors.newSingleThreadExecutor();
    try (Connection first = pool.getConnection(); Connection second = pool.getConnection()) {
      int secondPid = pid(second);
      try (Statement st = first.createStatement()) {
        st.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, done_at BIGINT)");
        st.execute("SELECT pg_advisory_lock(" + SchemaLock.POSTGRES_KEY + ")");
      }
      CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> {
        try {
          SchemaLock.run(second, JdbcDialect.POSTGRESQL,
              List.of("CREATE TABLE IF NOT EXISTS " + table + "_side (id BIGINT PRIMARY KEY)"));
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, other);
      Eventually.await("the second instance asks for the lock", Duration.ofSeconds(10),
          () -> triedTheLock(first, secondPid), tried -> tried);

      assertThatCode(() -> {
        try (Statement st = first.createStatement()) {
          st.execute("CREATE INDEX CONCURRENTLY IF NOT EXISTS " + table + "_done ON " + table + " (done_at)");
        }
      }).as("the index build under the lock").doesNotThrowAnyException();
      try (Statement st = first.createStatement()) {
        st.execute("SELECT pg_advisory_unlock(" + SchemaLock.POSTGRES_KEY + ")");
      }
      waiting.get(30, TimeUnit.SECONDS);
      assertThat(exists(first, table + "_side")).as("the waiting instance ran its statements").isTrue();
    } finally {
      other.shutdownNow();
      try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS " + table);
        st.execute("DROP TABLE IF EXISTS " + table + "_side");
      }
    }
  }

  /**
   * The outbox's purge index is built {@code CONCURRENTLY}, which waits for every transaction open in the database
   * with a snapshot: on a table just created, where it guards nothing, it is built plainly, so a new instance (or a
   * store made in a test) does not wait for another application's long transaction.
   */
  @Test
  void anIndexOnATableWithoutRowsIsBuiltWithoutWaitingForOpenTransactions() throws Exception {
    ExecutorService other = Executors.newSingleThreadExecutor();
    try (Connection open = pool.getConnection()) {
      open.setAutoCommit(false);
      open.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      try (Statement st = open.createStatement()) {
        st.executeQuery("SELECT 1").close(); // holds a snapshot until the transaction ends
      }
      CompletableFuture<Void> created = CompletableFuture.runAsync(() -> JdbcOutboxStore.builder(pool)
          .table(table).createSchemaIfMissing(true).build(), other);
      try {
        assertThatCode(() -> created.get(30, TimeUnit.SECONDS)).as("created while a transaction is open")
            .doesNotThrowAnyException();
      } finally {
        open.rollback();
        open.setAutoCommit(true);
        open.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      }
      assertThat(exists(open, table + "_finished")).isTrue();
      try (PreparedStatement ps = open.prepareStatement("SELECT indisvalid FROM pg_index WHERE indexrelid ="
          + " to_regclass(?)")) {
        ps.setString(1, table + "_finished");
        try (ResultSet rs = ps.executeQuery()) {
          assertThat(rs.next() && rs.getBoolean(1)).as("a valid index").isTrue();
        }
      }
    } finally {
      other.shutdownNow();
      try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS " + table + "_attempt");
        st.execute("DROP TABLE IF EXISTS " + table);
      }
    }
  }

  private static int pid(Connection c) throws Exception {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Whether backend {@code pid} has asked for the schema lock (waiting for it, or between two tries). */
  private static boolean triedTheLock(Connection c, int pid) {
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND query LIKE '%advisory_lock%'")) {
      ps.setInt(1, pid);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1) > 0;
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  private static boolean exists(Connection c, String name) throws Exception {
    try (PreparedStatement ps = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }
}
