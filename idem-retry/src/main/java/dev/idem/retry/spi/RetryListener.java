package dev.idem.retry.spi;

import java.time.Duration;

/**
 * Events of a {@link dev.idem.retry.Retry} execution, for meters and logs. Every method has a no-op default, so an
 * implementation overrides only what it needs. Called on the thread that runs the attempt (or completes it, for
 * async calls); implementations must be thread-safe and fast, and must not throw.
 *
 * <p>{@code name} is the {@link dev.idem.retry.Retry}'s name, for log lines and meter tags.
 */
public interface RetryListener {
  /** The listener that does nothing. */
  RetryListener NO_OP = new RetryListener() {};

  /** Attempt number {@code attempt} (1 for the first) is about to start. */
  default void onAttempt(String name, int attempt) {}

  /** A hedge (a second, concurrent copy of attempt {@code attempt}) is about to start. */
  default void onHedge(String name, int attempt) {}

  /**
   * Attempt {@code attempt} failed and a retry will start after {@code delay}. {@code cause} is null when the attempt
   * returned a result classified as retryable; {@link #onRetryScheduled(String, int, Duration, Throwable, Object)}
   * is also told that result.
   */
  default void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause) {}

  /**
   * Attempt {@code attempt} failed and a retry will start after {@code delay}: the event {@link dev.idem.retry.Retry}
   * reports. When the attempt threw, {@code cause} is what it threw and {@code result} is null; when it returned a
   * result classified as retryable (an HTTP 503 answer, say), {@code cause} is null and {@code result} is that result
   * (itself null only when the operation returned null). The default calls
   * {@link #onRetryScheduled(String, int, Duration, Throwable)}, so listeners written for that one keep working;
   * override this one to see the result.
   */
  default void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause, Object result) {
    onRetryScheduled(name, attempt, delay, cause);
  }

  /** The operation succeeded on attempt {@code attempts}. */
  default void onSuccess(String name, int attempts, Object result) {}

  /** The operation ended in failure after {@code attempts} attempts; {@code failure} is what the caller receives. */
  default void onFailure(String name, int attempts, Throwable failure) {}

  /** The retry budget refused the retry (or hedge) after attempt {@code attempt}. */
  default void onBudgetRefused(String name, int attempt) {}

  /** The circuit breaker refused attempt {@code attempt}; the operation was not called. */
  default void onCircuitOpen(String name, int attempt) {}
}
