package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Checkpoint;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link JdbcIdempotencyStore#inProgress(Instant)}, the read behind the in-progress gauges: it counts in-progress
 * records only, finds the oldest claim and the leases that have run out. Each run has a table of its own, so that
 * other tests' records do not count.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class InProgressRecordsContract {
  private static final Fingerprint FINGERPRINT = Fingerprint.ofHash("0".repeat(64));
  private static final Instant NOW = Instant.parse("2030-01-01T12:00:00Z");

  private final String table = "idem_inprog_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  private JdbcIdempotencyStore store;

  abstract JdbcDialect dialect();

  @BeforeAll
  void createTable() {
    store = JdbcIdempotencyStore.builder(Databases.pool(dialect())).name("in-progress").table(table)
        .createSchemaIfMissing(true).build();
  }

  @AfterAll
  void dropTable() throws Exception {
    try (Connection c = Databases.pool(dialect()).getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE " + table);
      st.execute("DROP TABLE IF EXISTS " + table + "_audit");
    }
  }

  private static IdempotencyRecord inProgress(String key, Instant claimedAt, Instant leaseEnd) {
    return new IdempotencyRecord(RecordKey.of("tenant", "POST /payments", key), RecordState.IN_PROGRESS,
        FINGERPRINT, null, "create", Checkpoint.empty(), "worker-1", leaseEnd, 1, claimedAt, claimedAt,
        claimedAt.plus(Duration.ofDays(1)));
  }

  private static IdempotencyRecord finished(String key, RecordState state, Instant at) {
    return IdempotencyRecord.finished(RecordKey.of("tenant", "POST /payments", key), FINGERPRINT,
        StoredResponse.of(state == RecordState.COMPLETED ? 201 : 402, "{}"), state, at, Duration.ofDays(1));
  }

  private void insert(IdempotencyRecord... records) throws Exception {
    store.inTransaction(tx -> {
      for (IdempotencyRecord r : records) {
        assertThat(store.insert(tx, r)).isTrue();
      }
      return null;
    });
  }

  private void deleteAll() throws Exception {
    try (Connection c = Databases.pool(dialect()).getConnection(); Statement st = c.createStatement()) {
      st.executeUpdate("DELETE FROM " + table);
    }
  }

  @Test
  void aTableWithoutInProgressRecordsReportsNone() throws Exception {
    deleteAll();
    insert(finished("done", RecordState.COMPLETED, NOW.minus(Duration.ofHours(2))));

    InProgressRecords found = store.inProgress(NOW);

    assertThat(found).isEqualTo(InProgressRecords.NONE);
    assertThat(found.oldestAge(NOW)).isZero();
  }

  @Test
  void countsOnlyInProgressRecordsWithTheOldestClaimAndTheLeasesThatRanOut() throws Exception {
    deleteAll();
    insert(
        inProgress("stuck", NOW.minus(Duration.ofMinutes(10)), NOW.minus(Duration.ofMinutes(5))),
        inProgress("at-the-edge", NOW.minus(Duration.ofMinutes(3)), NOW),
        inProgress("running", NOW.minus(Duration.ofSeconds(30)), NOW.plus(Duration.ofSeconds(30))),
        inProgress("young", NOW.minus(Duration.ofSeconds(1)), NOW.plus(Duration.ofMinutes(1))),
        finished("completed-long-ago", RecordState.COMPLETED, NOW.minus(Duration.ofHours(3))),
        finished("failed-long-ago", RecordState.FAILED, NOW.minus(Duration.ofHours(4))));

    InProgressRecords found = store.inProgress(NOW);

    assertThat(found.count()).isEqualTo(4);
    assertThat(found.leaseExpired()).as("a lease that ends exactly now has run out").isEqualTo(2);
    assertThat(found.oldestCreatedAt()).isEqualTo(NOW.minus(Duration.ofMinutes(10)));
    assertThat(found.earliestLeaseEnd()).isEqualTo(NOW.minus(Duration.ofMinutes(5)));
    assertThat(found.oldestAge(NOW)).isEqualTo(Duration.ofMinutes(10));
  }

  @Test
  void uncertainRecordsAreCountedApartFromTheRecordsInProgress() throws Exception {
    deleteAll();
    IdempotencyRecord uncertain = inProgress("uncertain", NOW.minus(Duration.ofHours(2)), NOW)
        .afterFailedResume(OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ZERO, NOW);
    insert(uncertain, inProgress("running", NOW.minus(Duration.ofSeconds(30)), NOW.plus(Duration.ofSeconds(30))));

    InProgressRecords found = store.inProgress(NOW);

    assertThat(uncertain.state()).isEqualTo(RecordState.UNCERTAIN);
    assertThat(found.count()).isEqualTo(1);
    assertThat(found.uncertain()).isEqualTo(1);
    assertThat(found.oldestCreatedAt()).isEqualTo(NOW.minus(Duration.ofSeconds(30)));
  }

  @Test
  void theLeaseCountFollowsTheInstantItIsAskedFor() throws Exception {
    deleteAll();
    insert(
        inProgress("a", NOW.minus(Duration.ofMinutes(2)), NOW.plus(Duration.ofSeconds(10))),
        inProgress("b", NOW.minus(Duration.ofMinutes(1)), NOW.plus(Duration.ofSeconds(20))));

    InProgressRecords before = store.inProgress(NOW);
    InProgressRecords between = store.inProgress(NOW.plus(Duration.ofSeconds(15)));
    InProgressRecords after = store.inProgress(NOW.plus(Duration.ofMinutes(1)));

    assertThat(before.leaseExpired()).isZero();
    assertThat(between.leaseExpired()).isEqualTo(1);
    assertThat(after.leaseExpired()).isEqualTo(2);
    assertThat(after.count()).isEqualTo(2);
    assertThat(after.oldestAge(NOW.plus(Duration.ofMinutes(1)))).isEqualTo(Duration.ofMinutes(3));
  }

  @Test
  void aRecordThatFinishesLeavesTheCount() throws Exception {
    deleteAll();
    IdempotencyRecord running = inProgress("finishing", NOW.minus(Duration.ofMinutes(1)), NOW.plusSeconds(30));
    insert(running);
    InProgressRecords whileRunning = store.inProgress(NOW);

    store.inTransaction(tx -> store.update(tx, running.finish(RecordState.COMPLETED, StoredResponse.of(201, "{}"),
        NOW)));
    InProgressRecords finished = store.inProgress(NOW);

    assertThat(whileRunning.count()).isEqualTo(1);
    assertThat(finished).isEqualTo(InProgressRecords.NONE);
  }
}
