package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.Checkpoint;
import dev.idem.core.ConfigurationException;
import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoreException;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.test.Eventually;
import dev.idem.test.MutableClock;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * Partitioned expiry on the real PostgreSQL: one winner per key across a partition boundary, partitions made ahead
 * and on demand, drops that keep live rows, give way to long transactions and never fail a claim.
 */
class PostgresPartitionedExpiryTest {
  private static final Fingerprint FINGERPRINT = Fingerprint.ofHash("a".repeat(64));
  /** An hour boundary, so a partition bound (the tests' partitions are one hour wide). */
  private static final Instant BOUNDARY = Instant.parse("2030-01-01T12:00:00Z");

  private final String scope = "pt-" + UUID.randomUUID();

  private RecordKey key(String key) {
    return RecordKey.of(scope, "POST /things", key);
  }

  /** A completed record without retention whose gone_at (its expiry) is {@code goneAt}. */
  private static IdempotencyRecord completedGoneAt(RecordKey key, Instant goneAt) {
    Duration ttl = Duration.ofHours(1);
    return IdempotencyRecord.finished(key, FINGERPRINT, StoredResponse.of(201, "{}"), RecordState.COMPLETED,
        goneAt.minus(ttl), ttl);
  }

  @Test
  void claimsOfOneKeyOnBothSidesOfAPartitionBoundaryHaveExactlyOneWinner() throws Exception {
    JdbcIdempotencyStore store = PartitionedStores.store("idem_pt_race");
    int threads = 16;
    int rounds = 200;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CyclicBarrier start = new CyclicBarrier(threads);
    try {
      for (int round = 0; round < rounds; round++) {
        RecordKey key = key("race-" + round);
        List<Future<String>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          // half the claims land in the partition before the boundary, half in the one after; thread 0 rolls back
          IdempotencyRecord record = completedGoneAt(key, BOUNDARY.plusMillis(t % 2 == 0 ? -1 : 0));
          boolean rollsBack = t == 0;
          results.add(pool.submit(() -> {
            start.await(30, TimeUnit.SECONDS);
            return store.inTransaction(tx -> {
              boolean won = store.insert(tx, record);
              if (!won || rollsBack) {
                tx.setRollbackOnly();
              }
              return won ? rollsBack ? "rolled back" : "won" : "lost";
            });
          }));
        }
        List<String> outcomes = new ArrayList<>();
        for (Future<String> f : results) {
          outcomes.add(f.get(60, TimeUnit.SECONDS));
        }

        assertThat(outcomes).as("round %d", round).containsOnlyOnce("won");
        assertThat(rows(store.table(), key)).as("round %d", round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void atomicExecutionsOfOneKeyWhoseExpiriesStraddleAPartitionBoundaryTakeEffectOnce() throws Exception {
    MutableClock clock = new MutableClock(BOUNDARY.minus(Duration.ofHours(1)).minusMillis(1));
    JdbcIdempotencyStore store = PartitionedStores.store("idem_pt_atomic", clock);
    // the same claim time, TTLs 2 ms apart: one Idem's records land before the boundary, the other's after it
    Idem early = Idem.builder().name("early").store(store).clock(clock).defaultPolicy(OperationPolicy.builder()
        .ttl(Duration.ofHours(1)).retention(Duration.ZERO).build()).build();
    Idem late = Idem.builder().name("late").store(store).clock(clock).defaultPolicy(OperationPolicy.builder()
        .ttl(Duration.ofHours(1).plusMillis(2)).retention(Duration.ZERO).build()).build();
    int threads = 16;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CyclicBarrier start = new CyclicBarrier(threads);
    try {
      for (int round = 0; round < 100; round++) {
        String marker = scope + "/atomic-" + round;
        IdempotentRequest request = IdempotentRequest.of(key("atomic-" + round),
            "{\"amount\":1}".getBytes(StandardCharsets.UTF_8), "application/json");
        List<Future<Execution.Outcome>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          Idem idem = t % 2 == 0 ? early : late;
          results.add(pool.submit(() -> {
            start.await(30, TimeUnit.SECONDS);
            return idem.atomic(request, tx -> {
              Databases.insertEffect(JdbcTransaction.connectionOf(tx), marker);
              return StoredResponse.json(201, "{}");
            }).outcome();
          }));
        }
        List<Execution.Outcome> outcomes = new ArrayList<>();
        for (Future<Execution.Outcome> f : results) {
          outcomes.add(f.get(60, TimeUnit.SECONDS));
        }

        assertThat(outcomes).as("round %d", round).containsOnlyOnce(Execution.Outcome.STORED);
        assertThat(Databases.countEffects(JdbcDialect.POSTGRESQL, marker)).as("round %d", round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(partitions(store.table())).contains("idem_pt_atomic_p203001011100", "idem_pt_atomic_p203001011200");
  }

  @Test
  void partitionsAreMadeAheadAtBuildAndByPurgeAndOnDemandByAClaim() throws Exception {
    MutableClock clock = new MutableClock(BOUNDARY.plus(Duration.ofMinutes(30)));
    JdbcIdempotencyStore store = PartitionedStores.store("idem_pt_ahead", clock);
    List<String> atBuild = partitions(store.table());
    IdempotencyRecord farAhead = completedGoneAt(key("far"), BOUNDARY.plus(Duration.ofDays(10)));

    boolean inserted = insert(store, farAhead);
    List<String> afterClaim = partitions(store.table());
    store.purgeExpired(BOUNDARY.plus(Duration.ofHours(2)), 100);
    List<String> afterPurge = partitions(store.table());

    assertThat(atBuild).containsExactly("idem_pt_ahead_p203001011200", "idem_pt_ahead_p203001011300",
        "idem_pt_ahead_p203001011400", "idem_pt_ahead_p203001011500");
    assertThat(inserted).isTrue();
    assertThat(afterClaim).contains("idem_pt_ahead_p203001111200");
    assertThat(store.find(farAhead.key())).contains(farAhead);
    assertThat(afterPurge).contains("idem_pt_ahead_p203001011600", "idem_pt_ahead_p203001011700",
        "idem_pt_ahead_p203001111200").doesNotContain("idem_pt_ahead_p203001011200");
  }

  @Test
  void aDropMovesLiveRowsOutAndRemovesEveryGoneRow() throws Exception {
    JdbcIdempotencyStore store = PartitionedStores.store("idem_pt_drop");
    Instant claimedAt = BOUNDARY.minus(Duration.ofHours(1));
    IdempotencyRecord gone = completedGoneAt(key("gone"), BOUNDARY.plus(Duration.ofMinutes(10)));
    IdempotencyRecord stuck = IdempotencyRecord.claimed(key("stuck"), FINGERPRINT, "w", claimedAt,
        Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofMinutes(20))
        .withRecoveryPoint("charge", Checkpoint.of(Map.of("charge_id", "ch_1")), claimedAt.plusSeconds(30), claimedAt);
    IdempotencyRecord unstarted = IdempotencyRecord.claimed(key("unstarted"), FINGERPRINT, "w", claimedAt,
        Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofMinutes(20));
    IdempotencyRecord uncertain = IdempotencyRecord.claimed(key("uncertain"), FINGERPRINT, "w", claimedAt,
        Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofMinutes(20));
    for (IdempotencyRecord r : List.of(gone, stuck, unstarted, uncertain)) {
      assertThat(insert(store, r)).isTrue();
    }
    // another helper's state: a record that waits for a decision, and must never be purged
    execute("UPDATE " + store.table() + " SET state = 'uncertain' WHERE scope = '" + scope
        + "' AND idem_key = 'uncertain'");
    Instant later = BOUNDARY.plus(Duration.ofHours(3));
    List<String> before = partitions(store.table());

    int purged = store.purgeExpired(later, 100);
    List<String> after = partitions(store.table());

    assertThat(before).contains("idem_pt_drop_p203001011200");
    assertThat(after).doesNotContain("idem_pt_drop_p203001011200");
    assertThat(purged).as("dropped rows are not counted").isZero();
    assertThat(store.find(gone.key())).isEmpty();
    assertThat(store.find(unstarted.key())).isEmpty();
    assertThat(store.find(stuck.key())).contains(stuck);
    assertThat(rows(store.table(), uncertain.key())).isEqualTo(1);
    assertThat(goneAt(store.table(), uncertain.key())).isGreaterThan(later.toEpochMilli());
  }

  @Test
  void aClaimThatWaitedForTheDeletionOfAnOldRowOfItsKeySurvivesTheDropOfThatRowsPartition() throws Exception {
    JdbcIdempotencyStore store = PartitionedStores.store("idem_pt_reuse");
    IdempotencyRecord old = completedGoneAt(key("reused"), BOUNDARY.plus(Duration.ofMinutes(10)));
    IdempotencyRecord fresh = completedGoneAt(key("reused"), BOUNDARY.plus(Duration.ofDays(10)));
    insert(store, old);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    Future<Boolean> claim;

    try (Connection deleter = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      // a delete that takes no advisory lock (purge, evict) holds the old row while the claim arrives
      deleter.setAutoCommit(false);
      try (PreparedStatement ps = deleter.prepareStatement("DELETE FROM " + store.table() + " WHERE scope = ?")) {
        ps.setString(1, scope);
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }
      claim = pool.submit(() -> insert(store, fresh));
      Eventually.await("the claim waits on the deleted row", Duration.ofSeconds(30),
          PostgresPartitionedExpiryTest::insertsWaitingOnALock, n -> n > 0);
      deleter.commit();
    } finally {
      pool.shutdown();
    }
    boolean inserted = claim.get(30, TimeUnit.SECONDS);
    store.purgeExpired(BOUNDARY.plus(Duration.ofHours(3)), 100);

    assertThat(inserted).isTrue();
    assertThat(partitions(store.table())).doesNotContain("idem_pt_reuse_p203001011200");
    assertThat(store.find(fresh.key())).contains(fresh);
  }

  private static long insertsWaitingOnALock() {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            + " AND query LIKE '%INSERT INTO idem_pt_reuse %'")) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void aDropGivesWayToALongTransactionAndHappensAtTheNextPurge() throws Exception {
    JdbcIdempotencyStore store = PartitionedStores.store("idem_pt_wait");
    IdempotencyRecord gone = completedGoneAt(key("gone"), BOUNDARY.plus(Duration.ofMinutes(10)));
    insert(store, gone);
    Instant later = BOUNDARY.plus(Duration.ofHours(3));
    List<String> kept;

    try (Connection open = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      open.setAutoCommit(false);
      try (Statement st = open.createStatement()) {
        st.executeQuery("SELECT COUNT(*) FROM " + store.table()).close();
      }
      store.purgeExpired(later, 100);
      kept = partitions(store.table());
      open.commit();
    }
    store.purgeExpired(later, 100);

    assertThat(kept).contains("idem_pt_wait_p203001011200");
    assertThat(partitions(store.table())).doesNotContain("idem_pt_wait_p203001011200");
    assertThat(store.find(gone.key())).isEmpty();
  }

  @Test
  void claimsRunningWhilePartitionsAreDroppedAllSucceed() throws Exception {
    JdbcIdempotencyStore store = PartitionedStores.store("idem_pt_busy");
    int claimers = 4;
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger claims = new AtomicInteger();
    Semaphore claimed = new Semaphore(0);
    ExecutorService pool = Executors.newFixedThreadPool(claimers);
    List<Future<Integer>> results = new ArrayList<>();
    for (int t = 0; t < claimers; t++) {
      int thread = t;
      results.add(pool.submit(() -> {
        int lost = 0;
        for (int i = 0; running.get(); i++) {
          Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
          IdempotencyRecord r = IdempotencyRecord.finished(key("busy-" + thread + "-" + i), FINGERPRINT,
              StoredResponse.of(201, "{}"), RecordState.COMPLETED, now, Duration.ofHours(1), Duration.ofHours(1));
          if (!insert(store, r)) {
            lost++;
          }
          claims.incrementAndGet();
          claimed.release();
        }
        return lost;
      }));
    }
    List<String> dropped = new ArrayList<>();
    Instant monthAgo = Instant.ofEpochMilli(System.currentTimeMillis()).truncatedTo(ChronoUnit.HOURS)
        .minus(Duration.ofDays(30));
    try {
      for (int round = 0; round < 10; round++) {
        Instant hour = monthAgo.plus(Duration.ofHours(round));
        insert(store, completedGoneAt(key("old-" + round), hour));
        fill(store.table(), hour, 2_000);
        dropped.add(partitionOf(store.table(), hour));
        assertThat(claimed.tryAcquire(claimers * 5, 60, TimeUnit.SECONDS)).isTrue();

        store.purgeExpired(Instant.ofEpochMilli(System.currentTimeMillis()), 1_000);
      }
    } finally {
      running.set(false);
      pool.shutdown();
    }
    int lost = 0;
    for (Future<Integer> f : results) {
      lost += f.get(60, TimeUnit.SECONDS);
    }

    assertThat(lost).as("claims of new keys that did not insert").isZero();
    assertThat(claims.get()).isGreaterThanOrEqualTo(10 * claimers * 5);
    assertThat(partitions(store.table())).doesNotContainAnyElementsOf(dropped);
  }

  @Test
  void aClaimOutsideReadCommittedFailsLoudlyInsteadOfRacing() throws Exception {
    JdbcIdempotencyStore store = PartitionedStores.store("idem_pt_isolation");
    IdempotencyRecord r = completedGoneAt(key("rr"), BOUNDARY);

    Throwable thrown;
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      try (var binding = store.useConnection(c)) {
        thrown = catchThrowable(() -> store.inTransaction(tx -> store.insert(tx, r)));
      } finally {
        c.rollback();
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        c.setAutoCommit(true);
      }
    }

    assertThat(thrown).isInstanceOf(StoreException.class).hasMessageContaining("needs read committed");
    assertThat(store.find(r.key())).isEmpty();
  }

  @Test
  void partitionedExpiryIsRefusedOutsidePostgresAndOnAnUnpartitionedTable() {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:pt-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    JdbcIdempotencyStore plain = Databases.store(JdbcDialect.POSTGRESQL);

    assertThatThrownBy(() -> JdbcIdempotencyStore.builder(h2).partitionedExpiry(Duration.ofDays(1))
        .createSchemaIfMissing(true).build())
        .isInstanceOf(ConfigurationException.class).hasMessageContaining("partitionedExpiry needs PostgreSQL");
    assertThatThrownBy(() -> JdbcIdempotencyStore.builder(h2).partitionedExpiry(Duration.ofSeconds(90)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("whole minutes");
    assertThatThrownBy(() -> JdbcIdempotencyStore.builder(h2).partitionedExpiry(Duration.ofDays(32)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("31 days");
    assertThatThrownBy(() -> JdbcIdempotencyStore.builder(h2).partitionedExpiry(Duration.ofMinutes(1))
        .partitionsAhead(Duration.ofDays(1)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("more than 400 partitions");
    assertThatThrownBy(() -> JdbcIdempotencyStore.builder(plain.dataSource()).table(plain.table())
        .partitionedExpiry(Duration.ofDays(1)).build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("is not partitioned");
  }

  private static boolean insert(JdbcIdempotencyStore store, IdempotencyRecord r) throws Exception {
    return store.inTransaction(tx -> {
      boolean inserted = store.insert(tx, r);
      if (!inserted) {
        tx.setRollbackOnly();
      }
      return inserted;
    });
  }

  /** Adds {@code n} expired completed rows of throw-away keys to the partition of {@code hour}. */
  private void fill(String table, Instant hour, int n) throws SQLException {
    long gone = hour.toEpochMilli();
    execute("INSERT INTO " + table + " (scope, operation, idem_key, state, fingerprint, response_status, version,"
        + " created_at, updated_at, expires_at, purge_at, gone_at) SELECT '" + scope + "', 'POST /fill', 'k' || g || '-"
        + gone + "', 'completed', repeat('a', 64), 201, 1, " + gone + ", " + gone + ", " + gone + ", " + gone + ", "
        + gone + " FROM generate_series(1, " + n + ") g");
  }

  private static void execute(String sql) throws SQLException {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection(); Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static List<String> partitions(String table) throws SQLException {
    List<String> names = new ArrayList<>();
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT c.relname FROM pg_inherits i JOIN pg_class c"
            + " ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(?) ORDER BY c.relname")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          names.add(rs.getString(1));
        }
      }
    }
    return names;
  }

  private static String partitionOf(String table, Instant at) throws SQLException {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT tableoid::regclass::text FROM " + table
            + " WHERE gone_at = ? LIMIT 1")) {
      ps.setLong(1, at.toEpochMilli());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  private static int rows(String table, RecordKey key) throws SQLException {
    return (int) selectLong("SELECT COUNT(*) FROM " + table, key);
  }

  private static long goneAt(String table, RecordKey key) throws SQLException {
    return selectLong("SELECT MAX(gone_at) FROM " + table, key);
  }

  private static long selectLong(String select, RecordKey key) throws SQLException {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection();
        PreparedStatement ps = c.prepareStatement(select + " WHERE scope = ? AND operation = ? AND idem_key = ?")) {
      ps.setString(1, key.scope().value());
      ps.setString(2, key.operation().name());
      ps.setString(3, key.key().value());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
