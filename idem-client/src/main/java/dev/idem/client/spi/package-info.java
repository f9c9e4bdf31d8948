/**
 * Interfaces a user of idem-client implements: {@link dev.idem.client.spi.PendingJournal} (where pending intents are
 * kept; {@link dev.idem.client.FileJournal} is the built-in one), {@link dev.idem.client.spi.AttemptListener}
 * (every attempt, for logs and meters) and {@link dev.idem.client.spi.ClientTracing} (a trace per call, a span per
 * attempt and the trace context on its headers; {@link dev.idem.client.otel.OpenTelemetryTracing} is the built-in
 * one). All have no-op defaults. The retry loop's events go to idem-retry's {@code dev.idem.retry.spi.RetryListener},
 * through {@code IdempotentHttpClient.Builder.retryListener}.
 */
package dev.idem.client.spi;
