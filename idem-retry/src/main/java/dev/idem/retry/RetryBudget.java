package dev.idem.retry;

import dev.idem.retry.internal.RatioRetryBudget;
import dev.idem.retry.internal.TokenBucketRetryBudget;
import java.time.Clock;
import java.time.Duration;

/**
 * Limits how much of the traffic to one destination may be retries, so that retries stop when failures dominate
 * instead of multiplying the load on a struggling server. Share one budget per destination; implementations are
 * thread-safe and do not allocate.
 *
 * <p>Protocol ({@link Retry} follows it): {@link #onRequest()} once per call, {@link #onFailure()} or
 * {@link #onSuccess()} after every attempt (a hedged attempt reports one outcome), {@link #tryAcquireRetry()} before
 * every retry, {@link #tryAcquireHedge()} before every hedge.
 */
public interface RetryBudget {
  /** Call once per first attempt (a request, not a retry). */
  void onRequest();

  /** Call after every failed attempt. */
  void onFailure();

  /** Call after every successful attempt. */
  void onSuccess();

  /** Whether one more retry may be sent now; true consumes the permission. */
  boolean tryAcquireRetry();

  /**
   * Whether one more hedge (a second copy of an attempt still in flight) may be sent now; true consumes the
   * permission. A hedge is an extra request that reports no outcome of its own, so it must cost something even where
   * a retry is only gated: the token bucket takes one token for it. Default: {@link #tryAcquireRetry()} (the ratio
   * budget counts a hedge as a retry).
   */
  default boolean tryAcquireHedge() {
    return tryAcquireRetry();
  }

  /** What remains: tokens for a token bucket, retries allowed now for a ratio budget. */
  double remaining();

  /**
   * Token bucket (the gRPC retry-throttling scheme): starts full at maxTokens; each failure costs one token; each
   * success adds tokenRatio tokens (up to maxTokens); retries are allowed only while tokens &gt; maxTokens / 2.
   * {@link #tryAcquireRetry()} is a gate here: failures, not retries, cost tokens. A hedge costs one token
   * ({@link #tryAcquireHedge()}: allowed while tokens &gt; maxTokens / 2, then one token is taken), since it sends an
   * extra request without reporting an outcome of its own.
   *
   * @throws IllegalArgumentException unless {@code maxTokens > 0} and {@code tokenRatio > 0}, both finite
   */
  static RetryBudget tokenBucket(double maxTokens, double tokenRatio) {
    return new TokenBucketRetryBudget(maxTokens, tokenRatio);
  }

  /**
   * Ratio budget: over a sliding window, retries &lt;= ratio * requests + minRetriesPerSecond * window seconds.
   * The clock drives the window (virtual time in simulations and tests).
   *
   * @throws IllegalArgumentException unless {@code ratio >= 0} (finite), {@code minRetriesPerSecond >= 0} and
   *     {@code window >= 1 ms}
   */
  static RetryBudget ratio(double ratio, int minRetriesPerSecond, Duration window, Clock clock) {
    return new RatioRetryBudget(ratio, minRetriesPerSecond, window, clock);
  }
}
