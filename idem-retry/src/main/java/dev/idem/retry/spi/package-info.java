/**
 * What users of idem-retry implement: {@link dev.idem.retry.spi.RetryListener} (events for meters and logs, no-op
 * defaults) and {@link dev.idem.retry.spi.Sleeper} (how a synchronous retry waits; tests inject a fake).
 */
package dev.idem.retry.spi;
