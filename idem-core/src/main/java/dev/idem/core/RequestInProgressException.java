package dev.idem.core;

import java.time.Duration;

/**
 * The first request with this key is still running. Retry after {@link #retryAfter()}. Maps to 409
 * {@code CONFLICT.idempotency.in_progress}.
 */
public class RequestInProgressException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final transient RecordKey key;
  private final Duration retryAfter;

  public RequestInProgressException(RecordKey key, Duration retryAfter) {
    super("a request with key '" + key.key() + "' of " + key.operation() + " is still in progress; retry after "
        + retryAfter.toSeconds() + " s");
    this.key = key;
    this.retryAfter = retryAfter;
  }

  public RecordKey key() {
    return key;
  }

  public Duration retryAfter() {
    return retryAfter;
  }
}
