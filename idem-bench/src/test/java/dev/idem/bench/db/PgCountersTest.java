package dev.idem.bench.db;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PgCounters and LoadPass read what a pass cost PostgreSQL: in a database of its own (so that no other session's
 * commits count), a loop of one-insert transactions shows one commit per operation and WAL for each, and every
 * operation LoadPass counts is a row in the table.
 */
class PgCountersTest {
  private static final String URL =
      System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
  /** The server's URL without the database name. */
  private static final String SERVER = URL.substring(0, URL.lastIndexOf('/') + 1);
  private static final String USER = System.getProperty("idem.test.postgres.user", "postgres");
  private static final int POOL = 3;
  private static String database;
  private static HikariDataSource pool;

  @BeforeAll
  static void privateDatabase() throws SQLException {
    database = "idem_counters_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
    try (Connection c = DriverManager.getConnection(URL, USER, "");
        Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + database);
    }
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(SERVER + database);
    config.setUsername(USER);
    config.setMaximumPoolSize(POOL);
    config.setMinimumIdle(POOL);
    pool = new HikariDataSource(config);
    try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
      st.execute("CREATE TABLE counted (id BIGSERIAL PRIMARY KEY, note VARCHAR(40) NOT NULL)");
    }
  }

  @AfterAll
  static void dropDatabase() throws SQLException {
    if (pool != null) {
      pool.close();
    }
    try (Connection c = DriverManager.getConnection(URL, USER, "");
        Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    }
  }

  @Test
  void aLoopOfOneInsertTransactionsShowsOneCommitPerOperation() throws Exception {
    long rowsBefore = rows();

    LoadPass.Result r = LoadPass.run("one insert per transaction", POOL, 1, new PgCounters(pool, POOL), () -> {
      try (Connection c = pool.getConnection();
          PreparedStatement ps = c.prepareStatement("INSERT INTO counted (note) VALUES ('one')")) {
        ps.executeUpdate();
      }
    });

    assertThat(rows() - rowsBefore).as("rows written").isEqualTo(r.ops());
    assertThat(r.ops()).as("operations").isGreaterThan(10);
    // the marks' own statements (pool + 1 flushes and reads) add a few commits, far fewer than the operations
    assertThat(r.commitsPerOp()).as("commits/op").isBetween(1.0, 1.0 + 2.0 * (POOL + 2) / r.ops());
    assertThat(r.walBytesPerOp()).as("WAL bytes/op: a heap tuple, an index entry and a commit record at least")
        .isGreaterThan(100);
    assertThat(r.opsPerSecond()).isPositive();
    assertThat(r.backendCpuUs()).as("the pool's backends' CPU us/op").isPositive();
  }

  @Test
  void theUsageBetweenTwoMarksCountsEachTransaction() {
    PgCounters counters = new PgCounters(pool, POOL);
    PgCounters.Mark before = counters.mark();
    assertThat(before.backends()).as("one backend per pooled connection").doesNotHaveDuplicates().hasSize(POOL);
    int transactions = 25;
    for (int i = 0; i < transactions; i++) {
      try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
        c.setAutoCommit(false);
        st.execute("INSERT INTO counted (note) VALUES ('two')");
        st.execute("INSERT INTO counted (note) VALUES ('rows')");
        c.commit();
      } catch (SQLException e) {
        throw new AssertionError(e);
      }
    }

    PgCounters.Usage used = counters.since(before);

    // the first mark's two reading statements are flushed by the second mark and count here, and so do the second
    // mark's flushes
    assertThat(used.commits()).isBetween((long) transactions, (long) transactions + POOL + 4);
    assertThat(used.commitsPer(transactions)).isBetween(1.0, 1.25);
    assertThat(used.walBytes()).isPositive();
  }

  @Test
  void theWalBreakdownNamesTheTableAndItsIndexThatAPassWroteTo() throws Exception {
    assertThat(WalBreakdown.enable(pool)).as("pg_walinspect created").isTrue();

    LoadPass.Result r = LoadPass.run("inserts for the breakdown", POOL, 1, new PgCounters(pool, POOL), () -> {
      try (Connection c = pool.getConnection();
          PreparedStatement ps = c.prepareStatement("INSERT INTO counted (note) VALUES ('walked')")) {
        ps.executeUpdate();
      }
    });
    List<WalBreakdown.Row> rows = WalBreakdown.between(pool, r.walFrom(), r.walTo());

    assertThat(r.walTo()).isGreaterThan(r.walFrom());
    // one heap insert per row (INSERT, or INSERT+INIT on a new page), and its primary key's entry (INSERT_LEAF,
    // but for the few inserts that split a page and are logged with the split)
    assertThat(records(rows, "counted", "INSERT")).as("heap inserts").isEqualTo(r.ops());
    assertThat(records(rows, "counted_pkey", "INSERT_LEAF")).as("index inserts")
        .isBetween(r.ops() - r.ops() / 20 - 1, r.ops());
    assertThat(records(rows, "Transaction", "COMMIT")).as("commits").isGreaterThanOrEqualTo(r.ops());
    assertThat(rows.stream().mapToLong(WalBreakdown.Row::bytes).sum()).as("every record's bytes")
        .isLessThanOrEqualTo(r.walTo() - r.walFrom());
  }

  @Test
  void aStretchWithoutWalHasNoBreakdown() throws SQLException {
    PgCounters.Mark mark = new PgCounters(pool, POOL).mark();

    assertThat(WalBreakdown.between(pool, mark.walBytes(), mark.walBytes())).isEmpty();
  }

  private static long records(List<WalBreakdown.Row> rows, String relation, String typePrefix) {
    return rows.stream().filter(row -> row.relation().equals(relation) && row.recordType().startsWith(typePrefix))
        .mapToLong(WalBreakdown.Row::records).sum();
  }

  private static long rows() throws SQLException {
    try (Connection c = pool.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM counted")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
