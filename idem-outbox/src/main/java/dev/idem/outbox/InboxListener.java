package dev.idem.outbox;

/** Hooks for meters on an inbox. Fast, thread-safe, never throwing; every method does nothing by default. */
public interface InboxListener {
  /** The handler ran for a new event (the caller's transaction may still roll back). */
  default void processed(String consumer) {}

  /** A redelivered event was skipped. */
  default void duplicate(String consumer) {}

  /** An event id came again with a different payload. */
  default void payloadMismatch(String consumer, String eventId) {}
}
