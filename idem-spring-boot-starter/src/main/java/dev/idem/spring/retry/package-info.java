/**
 * Micrometer meters of idem-retry's {@link dev.idem.retry.Retry} and {@link dev.idem.retry.CircuitBreaker}:
 * {@link dev.idem.spring.retry.RetryMeters} (the entry point: a {@code RetryListener}, and
 * {@link dev.idem.spring.retry.RetryMeters#bind} for breakers), auto-configured as a bean by
 * {@link dev.idem.spring.retry.IdemRetryMetricsAutoConfiguration} when idem-retry and a {@code MeterRegistry} are
 * present.
 */
package dev.idem.spring.retry;
