package dev.idem.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.RecordKey;
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
}
