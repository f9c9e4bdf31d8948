package dev.idem.spring.events;

/** What happens to an externalized event published while no Spring transaction is active. */
public enum OutsideTransaction {
  /**
   * The publisher gets an {@link IllegalStateException} naming the event: the default, since an event outside a
   * transaction describes a write that may not have happened.
   */
  FAIL,
  /** The event is written to the outbox in a transaction of its own, committed at once. */
  OWN_TRANSACTION
}
