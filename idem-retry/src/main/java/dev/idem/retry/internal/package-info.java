/**
 * Implementation of {@code dev.idem.retry}: budgets and the circuit breaker. Not an API; may change without notice.
 */
package dev.idem.retry.internal;
