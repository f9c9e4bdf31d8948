package dev.idem.retry;

import java.time.Duration;

/**
 * A server's {@code Retry-After} hint is longer than the policy's {@link RetryPolicy#maxRetryAfter()}: the call ends
 * at once instead of parking for that long. Carries the hint and the maximum.
 */
public class RetryAfterExceededException extends RetryException {
  private static final long serialVersionUID = 1L;
  private final Duration retryAfterHint;
  private final Duration maxRetryAfter;

  public RetryAfterExceededException(
      String name, int attempts, Duration retryAfterHint, Duration maxRetryAfter, Throwable lastCause) {
    super(name + ": the server's Retry-After hint " + retryAfterHint + " is longer than maxRetryAfter "
        + maxRetryAfter + " (after " + attempts + " attempt" + (attempts == 1 ? "" : "s")
        + "); ended at once instead of waiting. Retry later, or allow a longer maxRetryAfter.", attempts, lastCause);
    this.retryAfterHint = retryAfterHint;
    this.maxRetryAfter = maxRetryAfter;
  }

  /** The server's hint. */
  public Duration retryAfterHint() {
    return retryAfterHint;
  }

  /** The longest hint the policy waits for. */
  public Duration maxRetryAfter() {
    return maxRetryAfter;
  }
}
