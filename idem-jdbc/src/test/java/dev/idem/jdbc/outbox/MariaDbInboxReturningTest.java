package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What {@link JdbcInboxStore#record} relies on in MariaDB: a multi-row {@code INSERT IGNORE ... RETURNING} returns the
 * rows it inserted and no others, also when it waited for a concurrent transaction holding one of its keys. Plain JDBC
 * on the real server, so that a server or driver upgrade that changes this fails here first.
 */
class MariaDbInboxReturningTest {
  private static final String TABLE = "ibi_returning_probe";
  private static final String INSERT = "INSERT IGNORE INTO " + TABLE + " (consumer, event_id, v) VALUES"
      + " ('c', ?, 2), ('c', ?, 2), ('c', ?, 2) RETURNING event_id";

  private final HikariDataSource ds = Databases.pool(JdbcDialect.MARIADB);

  @BeforeEach
  void createTable() throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + TABLE);
      st.execute("CREATE TABLE " + TABLE + " (consumer VARCHAR(255) NOT NULL, event_id VARCHAR(255) NOT NULL,"
          + " v INT NOT NULL, PRIMARY KEY (consumer, event_id))"
          + " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin");
    }
  }

  @AfterEach
  void dropTable() throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + TABLE);
    }
  }

  @Test
  void returningListsOnlyTheRowsInsertedNotTheIgnoredDuplicates() throws Exception {
    committed("b");

    List<String> returned;
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      returned = insertIgnoreReturning(c, "a", "b", "c");
      c.commit();
    }

    assertThat(returned).containsExactly("a", "c");
    assertThat(value("b")).as("the duplicate was left alone").isEqualTo(1);
  }

  @Test
  void aRowInsertedConcurrentlyAndCommittedWhileWaitingIsNotListed() throws Exception {
    List<String> returned = insertWhileAnotherTransactionHolds("b", true);

    assertThat(returned).containsExactly("a", "c");
    assertThat(value("b")).isEqualTo(1);
  }

  @Test
  void aRowInsertedConcurrentlyAndRolledBackWhileWaitingIsInsertedAndListed() throws Exception {
    List<String> returned = insertWhileAnotherTransactionHolds("b", false);

    assertThat(returned).containsExactly("a", "b", "c");
    assertThat(value("b")).isEqualTo(2);
  }

  /** Inserts {@code key} uncommitted, starts the batch insert, waits until it is blocked on it, then ends. */
  private List<String> insertWhileAnotherTransactionHolds(String key, boolean commit) throws Exception {
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (Connection holder = ds.getConnection(); Connection waiter = ds.getConnection()) {
      holder.setAutoCommit(false);
      insert(holder, key, 1);
      long waiterThread = connectionId(waiter);
      Future<List<String>> batch = pool.submit(() -> {
        waiter.setAutoCommit(false);
        List<String> r = insertIgnoreReturning(waiter, "a", "b", "c");
        waiter.commit();
        return r;
      });
      awaitLockWait(waiterThread, batch);
      if (commit) {
        holder.commit();
      } else {
        holder.rollback();
      }
      return batch.get(30, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
  }

  private static List<String> insertIgnoreReturning(Connection c, String... keys) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(INSERT)) {
      for (int i = 0; i < keys.length; i++) {
        ps.setString(i + 1, keys[i]);
      }
      List<String> returned = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          returned.add(rs.getString(1));
        }
      }
      return returned;
    }
  }

  /**
   * Polls InnoDB until the waiter's transaction waits for a lock: no sleeping, bounded by a deadline. Reads the live
   * {@code SHOW ENGINE INNODB STATUS}: {@code information_schema.INNODB_TRX} is a cache that a tight poll never lets
   * refresh (it refreshes only after 0.1 s without reads).
   */
  private void awaitLockWait(long thread, Future<?> waiter) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      while (true) {
        assertThat(waiter.isDone()).as("the insert finished without waiting for the holder").isFalse();
        try (ResultSet rs = st.executeQuery("SHOW ENGINE INNODB STATUS")) {
          rs.next();
          for (String transaction : rs.getString("Status").split("---TRANSACTION ")) {
            if (transaction.contains("\nLOCK WAIT ") && transaction.contains("MariaDB thread id " + thread + ",")) {
              return;
            }
          }
        }
        assertThat(System.nanoTime()).as("the insert never waited for the holder's lock").isLessThan(deadline);
      }
    }
  }

  private void committed(String key) throws SQLException {
    try (Connection c = ds.getConnection()) {
      insert(c, key, 1);
    }
  }

  private static void insert(Connection c, String key, int v) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + TABLE + " VALUES ('c', ?, ?)")) {
      ps.setString(1, key);
      ps.setInt(2, v);
      ps.executeUpdate();
    }
  }

  private static long connectionId(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT CONNECTION_ID()")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private int value(String key) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT v FROM " + TABLE
            + " WHERE consumer = 'c' AND event_id = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
