package dev.idem.test.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.spi.InboxStore;
import java.time.Instant;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract of an {@link InboxStore} that offers the first-delivery order ({@link InboxStore#recordsLast}): all of
 * {@link InboxStoreContract}, and {@link InboxStore#recordLast} recording a batch all or nothing, waiting for a
 * concurrent transaction that recorded one of its events, and committing nothing in a transaction marked
 * rollback-only. Extend it instead of {@link InboxStoreContract} for such a store.
 */
public abstract class RecordingLastInboxStoreContract extends InboxStoreContract {

  @BeforeEach
  void requireRecordingLast() {
    assertThat(store.recordsLast()).as("%s offers the first-delivery order", store.name()).isTrue();
  }

  @Test
  void recordLastFindingAnEventRecordedBeforeRecordsNoneOfTheBatchAndMarksTheTransactionRollbackOnly()
      throws Exception {
    recordCommitted(BILLING, now, "first", entry("evt-2"));
    recordCommitted(BILLING, now, "first", entry("evt-5", DIGEST_A));
    Instant later = now.plusSeconds(1);
    List<String> results = Collections.nCopies(3, "second");

    boolean[] marked = new boolean[2];
    boolean duplicate = store.inTransaction(tx -> {
      boolean r = store.recordLast(tx, BILLING, List.of(entry("evt-1"), entry("evt-2"), entry("evt-3")), results,
          later);
      marked[0] = tx.isRollbackOnly();
      return r;
    });
    boolean mismatch = store.inTransaction(tx -> {
      boolean r = store.recordLast(tx, BILLING, List.of(entry("evt-4"), entry("evt-5", DIGEST_B)),
          List.of("x", "y"), later);
      marked[1] = tx.isRollbackOnly();
      return r;
    });

    assertThat(duplicate).isFalse();
    assertThat(mismatch).isFalse();
    assertThat(marked).containsExactly(true, true);
    for (String id : List.of("evt-1", "evt-3", "evt-4")) {
      assertThat(admin().contains(BILLING, id)).as("%s recorded", id).isFalse();
    }
    assertThat(recordCommitted(BILLING, later, null, entry("evt-2"), entry("evt-5", DIGEST_A)))
        .containsExactly(duplicate("first", now), duplicate("first", now));
  }

  @Test
  void recordLastInATransactionMarkedRollbackOnlyCommitsNothing() throws Exception {
    boolean recorded = store.inTransaction(tx -> {
      tx.setRollbackOnly();
      return store.recordLast(tx, BILLING, List.of(entry("evt-1")), List.of("r"), now);
    });

    assertThat(recorded).as("recorded in the transaction").isTrue();
    assertThat(admin().contains(BILLING, "evt-1")).as("which rolled back").isFalse();
  }

  @Test
  void recordLastWaitsForATransactionThatRecordedTheEventAndRecordsNothingOnceItCommits() throws Exception {
    Instant later = now.plusSeconds(1);

    boolean recorded = raceOnOneEvent(true, recordingLastAround(later));

    assertThat(recorded).isFalse();
    assertThat(admin().contains(BILLING, "evt-before")).isFalse();
    assertThat(admin().contains(BILLING, "evt-next")).isFalse();
    assertThat(recordCommitted(BILLING, later, null, entry("evt-held"))).containsExactly(duplicate("first", now));
  }

  @Test
  void recordLastWaitsForATransactionThatRecordedTheEventAndRecordsItOnceItRollsBack() throws Exception {
    Instant later = now.plusSeconds(1);

    boolean recorded = raceOnOneEvent(false, recordingLastAround(later));

    assertThat(recorded).isTrue();
    assertThat(recordCommitted(BILLING, later, null, entry("evt-before"), entry("evt-held"), entry("evt-next")))
        .containsExactly(duplicate("second", later), duplicate("second", later), duplicate("second", later));
  }

  private TransactionWork<Boolean> recordingLastAround(Instant later) {
    return tx -> store.recordLast(tx, BILLING, List.of(entry("evt-before"), entry("evt-held"), entry("evt-next")),
        Collections.nCopies(3, "second"), later);
  }
}
