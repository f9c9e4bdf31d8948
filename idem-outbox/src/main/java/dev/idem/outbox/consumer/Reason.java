package dev.idem.outbox.consumer;

/**
 * Why a {@link Decision} was taken: the outcome of the inbox, or the kind of failure {@link ConsumerEngine#classify}
 * found. {@link #code()} is a stable name for logs, meters and dead-letter headers.
 */
public enum Reason {
  /** The handler ran and its transaction committed. */
  PROCESSED("processed"),
  /** The inbox had processed the id before, with the same payload; the handler did not run. */
  DUPLICATE("duplicate"),
  /** The message has no id, and no fallback gave one (or the fallback threw). */
  MISSING_ID("missing_event_id"),
  /** The message's id is one the inbox cannot hold (too long, control characters), or the inbox refused it. */
  INVALID_ID("invalid_event_id"),
  /** The message is larger than the consumer takes. */
  TOO_LARGE("too_large"),
  /** The id was processed before with another payload. */
  PAYLOAD_MISMATCH("payload_mismatch"),
  /** The message's own work failed: the handler threw, or its writes failed at the commit. Counted. */
  HANDLER_FAILED("handler_failed"),
  /** A passing conflict (deadlock, serialization failure, lock timeout): retried without counting, for a while. */
  CONTENTION("contention"),
  /** The database is away or refuses everyone's work alike: the consumer pauses; no message is counted. */
  DATABASE_DOWN("database_down");

  private final String code;

  Reason(String code) {
    this.code = code;
  }

  /** The stable name: {@code handler_failed}, {@code payload_mismatch}, {@code missing_event_id}, ... */
  public String code() {
    return code;
  }

  /** Whether a message with this reason is refused without running its handler ({@link Action#REJECT}). */
  public boolean isRefusal() {
    return this == MISSING_ID || this == INVALID_ID || this == TOO_LARGE;
  }
}
