package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * A PostgreSQL backend ended under a statement, as a restart, a failover or {@code pg_terminate_backend} ends it
 * (SQLState 57P01, admin shutdown): the failure is transient, so that the executor retries on a new connection.
 */
class PostgresTerminatedBackendTest {

  @Test
  void aStatementWhoseBackendIsTerminatedFailsTransiently() throws Exception {
    long lock = ThreadLocalRandom.current().nextLong();
    try (Connection victim = connect(); Connection other = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      int pid = pid(victim);
      other.setAutoCommit(false);
      try (PreparedStatement ps = other.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
        ps.setLong(1, lock);
        ps.execute();
      }
      CompletableFuture<SQLException> waiting = CompletableFuture.supplyAsync(() -> catchThrowableOfType(() -> {
        try (PreparedStatement ps = victim.prepareStatement("SELECT pg_advisory_lock(?)")) {
          ps.setLong(1, lock);
          ps.execute();
        }
      }, SQLException.class));
      awaitLockWait(other, pid);
      try (PreparedStatement ps = other.prepareStatement("SELECT pg_terminate_backend(?)")) {
        ps.setInt(1, pid);
        ps.execute();
      }
      other.rollback();

      SQLException e = waiting.get();

      assertThat((Throwable) e).isNotNull();
      assertThat(e.getSQLState()).isEqualTo("57P01");
      assertThat(SqlErrors.isTransient(JdbcDialect.POSTGRESQL, e)).isTrue();
      assertThat(SqlErrors.wrap("orders", JdbcDialect.POSTGRESQL, "find", e).isTransient()).isTrue();
    }
  }

  @Test
  void theOtherOperatorInterventionsOfAServerGoingAwayAreTransientToo() {
    for (String state : new String[] {"57P01", "57P02", "57P03"}) {
      assertThat(SqlErrors.isTransient(JdbcDialect.POSTGRESQL, new SQLException("server going away", state)))
          .as(state).isTrue();
    }
    assertThat(SqlErrors.isTransient(JdbcDialect.POSTGRESQL, new SQLException("database dropped", "57P04")))
        .isFalse();
  }

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(Databases.url(JdbcDialect.POSTGRESQL), Databases.user(JdbcDialect.POSTGRESQL),
        "");
  }

  private static int pid(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Until the backend waits for a lock (read from the catalog, no guessed delay). */
  private static void awaitLockWait(Connection c, int pid) throws SQLException {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT 1 FROM pg_stat_activity WHERE pid = ? AND wait_event_type = 'Lock'")) {
      ps.setInt(1, pid);
      while (true) {
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            return;
          }
        }
        if (Instant.now().isAfter(deadline)) {
          throw new AssertionError("backend " + pid + " never waited for the lock");
        }
      }
    }
  }
}
