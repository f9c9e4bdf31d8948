package dev.idem.outbox;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The relays of one outbox that wake after a commit that enqueued events for them, and the transactions the outbox
 * runs itself ({@link Outbox#inTransaction}), whose commits it sees. Thread-safe.
 */
final class CommitWakeups {
  private static final ThreadLocal<Scope> OPEN = new ThreadLocal<>();

  private final List<OutboxRelay> relays = new CopyOnWriteArrayList<>();

  void add(OutboxRelay relay) {
    relays.add(relay);
  }

  void remove(OutboxRelay relay) {
    relays.remove(relay);
  }

  boolean isEmpty() {
    return relays.isEmpty();
  }

  /** Wakes the relays that serve any of {@code routes}: a flag read when a wake-up is on its way already. */
  void wake(Set<String> routes) {
    for (OutboxRelay r : relays) {
      if (r.servesAny(routes)) {
        r.wakeUp();
      }
    }
  }

  /**
   * Runs {@code action} after {@code tx} commits, when {@code tx} is a transaction an outbox runs on this thread.
   *
   * @return false when it is not (the caller asks its {@link dev.idem.outbox.spi.AfterCommit} hook instead)
   */
  static boolean afterCommit(StoreTransaction tx, Runnable action) {
    for (Scope s = OPEN.get(); s != null; s = s.outer) {
      if (s.tx == tx) {
        s.actions.add(action);
        return true;
      }
    }
    return false;
  }

  /** One transaction an outbox runs: the actions to run once it has committed. Used on one thread. */
  static final class Scope {
    private final List<Runnable> actions = new ArrayList<>(1);
    private StoreTransaction tx;
    private Scope outer;
    private boolean commits;

    /** Runs {@code work} in {@code tx} with this scope open on the thread; notes whether the store will commit. */
    <R> R run(StoreTransaction tx, TransactionWork<R> work) throws Exception {
      this.tx = tx;
      this.outer = OPEN.get();
      OPEN.set(this);
      try {
        R result = work.execute(tx);
        commits = !tx.isRollbackOnly();
        return result;
      } finally {
        if (outer == null) {
          OPEN.remove();
        } else {
          OPEN.set(outer);
        }
      }
    }

    /** Called once the store's {@code inTransaction} has returned: runs the actions when it committed. */
    void ended() {
      if (commits) {
        for (Runnable a : actions) {
          try {
            a.run();
          } catch (RuntimeException ignored) {
            // a wake-up is a hint: the relay's poll finds the events anyway
          }
        }
      }
    }
  }
}
