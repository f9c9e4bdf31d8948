package dev.idem.spring.outbox;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.outbox.spi.AfterCommit;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The outbox's after-commit hook in a Spring application: an event enqueued while a Spring transaction is active on
 * the thread wakes the relays of its route from that transaction's {@code afterCommit} callback, so the relay sends
 * it at once instead of at its next poll. Nothing runs when the transaction rolls back. Outside a Spring transaction
 * the hook cannot tell, and the events wait for the relay's poll. Stateless and thread-safe.
 */
public final class SpringAfterCommit implements AfterCommit {
  @Override
  public boolean register(StoreTransaction tx, Runnable action) {
    if (!TransactionSynchronizationManager.isSynchronizationActive()) {
      return false;
    }
    TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
      @Override
      public void afterCommit() {
        action.run();
      }
    });
    return true;
  }
}
