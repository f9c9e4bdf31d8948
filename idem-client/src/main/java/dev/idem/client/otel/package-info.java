/**
 * OpenTelemetry for idem-client: {@link dev.idem.client.otel.OpenTelemetryTracing}, a
 * {@link dev.idem.client.spi.ClientTracing} that makes one internal span per call and, under it, one client span per
 * attempt, and passes the trace context on to the server. Entry point:
 * {@code IdempotentHttpClient.builder().tracing(OpenTelemetryTracing.of(openTelemetry))}. Needs
 * {@code io.opentelemetry:opentelemetry-api}, an optional dependency of idem-client.
 */
package dev.idem.client.otel;
