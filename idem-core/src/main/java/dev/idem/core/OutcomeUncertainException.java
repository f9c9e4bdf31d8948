package dev.idem.core;

import java.time.Instant;

/**
 * The key's record is {@link RecordState#UNCERTAIN}: the request's outside effect could not be confirmed within its
 * operation's resume cap, so it is not run again. A reconciler or an operator decides the record; until then a retry
 * gets this same answer. Maps to 409 {@code CONFLICT.idempotency.outcome_uncertain}, not retryable.
 */
public class OutcomeUncertainException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final transient RecordKey key;
  private final Instant since;

  public OutcomeUncertainException(RecordKey key, Instant since) {
    super("the outcome of key '" + key.key() + "' of " + key.operation() + " is uncertain since " + since
        + "; it is not run again until a reconciler or an operator decides it");
    this.key = key;
    this.since = since;
  }

  public RecordKey key() {
    return key;
  }

  /** When the record became uncertain. */
  public Instant since() {
    return since;
  }
}
