package dev.idem.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The contract of stores whose transactions can roll back ({@code transactional() == true}), on top of the base. */
public abstract class TransactionalStoreContract extends IdempotencyStoreContract {

  @Test
  void declaresItselfTransactional() {
    assertThat(store.transactional()).isTrue();
  }

  @Test
  void rollbackOnlyTransactionLeavesNoRecord() throws Exception {
    RecordKey key = key("rolled-back");

    store.inTransaction(tx -> {
      store.insert(tx, completed(key, now, Duration.ofHours(1)));
      tx.setRollbackOnly();
      return null;
    });

    assertThat(find(key)).isNull();
  }

  @Test
  void exceptionInTheWorkRollsBackAndPropagatesUnchanged() throws Exception {
    RecordKey key = key("thrown");
    IllegalStateException boom = new IllegalStateException("boom");

    Throwable thrown = catchThrowable(() -> store.inTransaction(tx -> {
      store.insert(tx, completed(key, now, Duration.ofHours(1)));
      throw boom;
    }));

    assertThat(thrown).isSameAs(boom);
    assertThat(find(key)).isNull();
  }

  @Test
  void uncommittedRecordIsInvisibleToOtherTransactions() throws Exception {
    RecordKey key = key("invisible");

    Object seenFromOutside = store.inTransaction(tx -> {
      store.insert(tx, completed(key, now, Duration.ofHours(1)));
      return find(key);
    });

    assertThat(seenFromOutside).isNull();
    assertThat(find(key)).isNotNull();
  }

  @Test
  void updateLastCommitsWithTheTransactionsOtherWrites() throws Exception {
    RecordKey other = key("before-update-last");
    IdempotencyRecord claimed = claimed(key("update-last"), now, Duration.ofSeconds(30));
    insert(claimed);

    boolean written = store.inTransaction(tx -> {
      store.insert(tx, completed(other, now, Duration.ofHours(1)));
      return store.updateLast(tx, claimed.finish(RecordState.COMPLETED, StoredResponse.of(200, "done"), now));
    });

    assertThat(written).isTrue();
    IdempotencyRecord read = find(claimed.key());
    assertThat(read.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(read.response().bodyAsString()).isEqualTo("done");
    assertThat(find(other)).as("the write before it committed with it").isNotNull();
  }

  @Test
  void aFencedUpdateLastIsFalseAndNothingOfItsTransactionCommits() throws Exception {
    RecordKey other = key("before-fenced-update-last");
    IdempotencyRecord claimed = claimed(key("fenced-update-last"), now, Duration.ofSeconds(30));
    insert(claimed);
    update(claimed.withLease("worker-2", now.plusSeconds(90), now));

    boolean written = store.inTransaction(tx -> {
      store.insert(tx, completed(other, now, Duration.ofHours(1)));
      boolean applied = store.updateLast(tx, claimed.finish(RecordState.COMPLETED, StoredResponse.of(200, "x"), now));
      if (!applied) {
        tx.setRollbackOnly();
      }
      return applied;
    });

    assertThat(written).isFalse();
    assertThat(find(other)).as("the write before it rolled back").isNull();
    IdempotencyRecord read = find(claimed.key());
    assertThat(read.leaseOwner()).isEqualTo("worker-2");
    assertThat(read.state()).isEqualTo(RecordState.IN_PROGRESS);
  }

  @Test
  void aTransactionMarkedRollbackOnlyBeforeItsLastRecordWriteCommitsNothing() throws Exception {
    RecordKey other = key("before-rollback-only");
    RecordKey inserted = key("insert-last-rollback-only");
    IdempotencyRecord claimed = claimed(key("update-last-rollback-only"), now, Duration.ofSeconds(30));
    insert(claimed);

    store.inTransaction(tx -> {
      store.insert(tx, completed(other, now, Duration.ofHours(1)));
      tx.setRollbackOnly();
      return store.updateLast(tx, claimed.finish(RecordState.COMPLETED, StoredResponse.of(200, "x"), now));
    });
    store.inTransaction(tx -> {
      tx.setRollbackOnly();
      return store.insertLast(tx, completed(inserted, now, Duration.ofHours(1)));
    });

    assertThat(find(other)).isNull();
    assertThat(find(claimed.key()).state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(find(inserted)).isNull();
  }
}
