package dev.idem.spring.events;

/**
 * What happens to an externalized event published while no Spring transaction is active, in one that holds no
 * connection of the outbox's data source (its transaction manager manages another data source, or Kafka), or in one
 * that has committed or rolled back already (its after-commit or after-completion phase, such as a
 * {@code @TransactionalEventListener(phase = AFTER_COMMIT)}).
 */
public enum OutsideTransaction {
  /**
   * The publisher gets an {@link IllegalStateException} naming the event: the default, since an event outside a
   * transaction describes a write that may not have happened.
   */
  FAIL,
  /** The event is written to the outbox in a transaction of its own, committed at once. */
  OWN_TRANSACTION
}
