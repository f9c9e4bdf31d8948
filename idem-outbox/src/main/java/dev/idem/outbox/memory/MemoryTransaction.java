package dev.idem.outbox.memory;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.util.ArrayList;
import java.util.List;

/**
 * A transaction of the in-memory stores: what the stores wrote in it waits in {@link #onCommit} actions, and what
 * they hold for it (keys other transactions must wait for) is let go by {@link #onEnd} actions, whichever way it
 * ends. Used on one thread.
 */
final class MemoryTransaction implements StoreTransaction {
  private final List<Runnable> commits = new ArrayList<>();
  private final List<Runnable> ends = new ArrayList<>();
  private boolean rollbackOnly;
  private boolean open = true;

  /** Runs the work in a new transaction; commits unless it throws or marked the transaction rollback-only. */
  static <R> R run(TransactionWork<R> work) throws Exception {
    MemoryTransaction tx = new MemoryTransaction();
    boolean commit = false;
    try {
      R result = work.execute(tx);
      commit = !tx.rollbackOnly;
      return result;
    } finally {
      tx.end(commit);
    }
  }

  /**
   * The in-memory transaction behind {@code tx}.
   *
   * @throws IllegalStateException when {@code tx} is another store's transaction, or has ended
   */
  static MemoryTransaction of(StoreTransaction tx) {
    if (!(tx instanceof MemoryTransaction m)) {
      throw new IllegalStateException("the in-memory stores write only in their own transactions (from"
          + " inTransaction), not in " + (tx == null ? "none" : tx.getClass().getName()));
    }
    if (!m.open) {
      throw new IllegalStateException("the transaction has ended");
    }
    return m;
  }

  void onCommit(Runnable action) {
    commits.add(action);
  }

  void onEnd(Runnable action) {
    ends.add(action);
  }

  private void end(boolean commit) {
    open = false;
    try {
      if (commit) {
        commits.forEach(Runnable::run);
      }
    } finally {
      ends.forEach(Runnable::run);
    }
  }

  @Override
  public <T> T unwrap(Class<T> type) {
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    throw new IllegalArgumentException("an in-memory transaction holds no " + type.getName());
  }

  @Override
  public void setRollbackOnly() {
    rollbackOnly = true;
  }

  @Override
  public boolean isRollbackOnly() {
    return rollbackOnly;
  }
}
