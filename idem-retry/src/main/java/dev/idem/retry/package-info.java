/**
 * Retries that are safe for servers: {@link dev.idem.retry.RetryPolicy} (attempts, {@link dev.idem.retry.Backoff}
 * with {@link dev.idem.retry.Jitter}, deadline, attempt timeout, classification), {@link dev.idem.retry.RetryAfter}
 * (the server's hint as a floor), {@link dev.idem.retry.RetryBudget} and {@link dev.idem.retry.CircuitBreaker} (shared
 * per destination), and hedging. No runtime dependencies.
 *
 * <p>Entry point: {@link dev.idem.retry.Retry}: {@code Retry.of(RetryPolicy.ofDefaults()).withBudget(budget)
 * .call(() -> send(request))}, or {@code callAsync(supplier, scheduler)}. See docs/retry.md.
 */
package dev.idem.retry;
