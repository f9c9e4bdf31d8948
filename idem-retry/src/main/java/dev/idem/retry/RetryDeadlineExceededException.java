package dev.idem.retry;

import java.time.Duration;

/**
 * The total deadline leaves no room for the next retry: the computed delay, or a server's {@code Retry-After} hint,
 * lands past it. Thrown at once, without waiting out the remaining time. Carries the hint (if any), the delay and
 * the time that remained.
 */
public class RetryDeadlineExceededException extends RetryException {
  private static final long serialVersionUID = 1L;
  private final Duration deadline;
  private final Duration remaining;
  private final Duration delay;
  private final Duration retryAfterHint;

  public RetryDeadlineExceededException(
      String name, int attempts, Duration deadline, Duration remaining, Duration delay, Duration retryAfterHint,
      Throwable lastCause) {
    super(message(name, attempts, deadline, remaining, delay, retryAfterHint), attempts, lastCause);
    this.deadline = deadline;
    this.remaining = remaining;
    this.delay = delay;
    this.retryAfterHint = retryAfterHint;
  }

  private static String message(
      String name, int attempts, Duration deadline, Duration remaining, Duration delay, Duration hint) {
    String why = hint != null && hint.compareTo(remaining) > 0
        ? "the server's Retry-After hint " + hint + " lands past the deadline"
        : remaining.isZero() ? "the deadline has passed" : "the next delay " + delay + " lands past the deadline";
    return name + ": " + why + " (total deadline " + deadline + ", remaining budget " + remaining + ", after "
        + attempts + " attempt" + (attempts == 1 ? "" : "s") + "); ended at once instead of waiting. Retry later, or"
        + " allow a longer deadline.";
  }

  /** The operation's total deadline. */
  public Duration deadline() {
    return deadline;
  }

  /** What remained of the deadline when the operation ended (never negative). */
  public Duration remaining() {
    return remaining;
  }

  /** The delay the next retry would have waited (the hint when it was larger). */
  public Duration delay() {
    return delay;
  }

  /** The server's Retry-After hint for the next retry, or null when there was none. */
  public Duration retryAfterHint() {
    return retryAfterHint;
  }
}
