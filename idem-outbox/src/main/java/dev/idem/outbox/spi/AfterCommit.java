package dev.idem.outbox.spi;

import dev.idem.core.spi.StoreTransaction;

/**
 * Tells an {@link dev.idem.outbox.Outbox} when a transaction it wrote events in commits, so that it can wake the
 * relays of those events at once instead of leaving them to their next poll. The outbox knows the transactions it
 * runs itself ({@code Outbox.inTransaction}); for the others it asks this hook. The Spring Boot starter's hook runs
 * the action from Spring's {@code afterCommit} callback.
 *
 * <p>A wake-up is a hint: an action that never runs (a hook that cannot tell) only means the relay finds the events
 * at its next poll. Implementations are thread-safe.
 */
@FunctionalInterface
public interface AfterCommit {
  /** A hook that never knows: events written in transactions the outbox does not run wait for the relay's poll. */
  AfterCommit NONE = (tx, action) -> false;

  /**
   * Arranges for {@code action} to run once {@code tx} has committed, and never if it rolls back. The action is
   * cheap and does not throw.
   *
   * @return whether the action was registered; false when this hook cannot tell when {@code tx} commits
   */
  boolean register(StoreTransaction tx, Runnable action);
}
