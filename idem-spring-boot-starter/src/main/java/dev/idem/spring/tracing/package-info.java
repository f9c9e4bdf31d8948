/**
 * OpenTelemetry span attributes for Idem in Spring Boot: {@link dev.idem.spring.tracing.IdemTracingAutoConfiguration}
 * (the entry point, active when {@code io.opentelemetry:opentelemetry-api} is on the class path and
 * {@code idem.tracing.enabled} is not {@code false}) registers {@link dev.idem.spring.tracing.OpenTelemetryListener},
 * which sets the key, the operation, the outcome and the attempt on the current server span, and
 * {@link dev.idem.spring.tracing.AttemptHeaderFilter}. The application chooses the tracer.
 */
package dev.idem.spring.tracing;
