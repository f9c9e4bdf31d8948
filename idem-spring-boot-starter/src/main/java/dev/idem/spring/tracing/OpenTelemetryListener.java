package dev.idem.spring.tracing;

import dev.idem.core.Execution;
import dev.idem.spring.internal.OutcomeNames;
import dev.idem.core.RecordKey;
import dev.idem.core.spi.IdemListener;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import java.time.Duration;

/**
 * Idem's decision as attributes of the current OpenTelemetry span (docs/OPERATIONS.md), for a server that traces its
 * requests: on {@link #onExecution}, {@value #IDEMPOTENCY_KEY}, {@value #OPERATION}, {@value #OUTCOME}
 * ({@code created}, {@code replayed}, {@code mismatch}, {@code in_progress} or {@code released}: the values of the
 * {@code outcome} tag of the {@code idem.requests} meter), {@value #KEY_AGE_MS} on a replay, and {@value #ATTEMPT}, the
 * client's {@code Idempotency-Attempt} header, which {@link AttemptHeaderFilter} hands to this listener; on
 * {@link #onReleased} for an exception, the key, the operation and {@code released}. The scope (a tenant) and the
 * instance name are not set, nor any body. Thread-safe.
 *
 * <p>The span is {@link Span#current()}, the server span of the request when the application traces: this listener
 * starts no span and extracts no trace context. Continuing the client's trace (the {@code traceparent} header that
 * {@code dev.idem.client.otel.OpenTelemetryTracing} sends) is the job of the tracing the application chooses, which
 * makes the server span current in OpenTelemetry's context for the whole filter chain:
 *
 * <ul>
 *   <li>Spring Boot's tracing with the OpenTelemetry bridge ({@code spring-boot-starter-opentelemetry}, that is
 *       Micrometer Tracing with {@code micrometer-tracing-bridge-otel} and the OpenTelemetry SDK, plus an exporter);
 *       its observation filter reads W3C {@code traceparent} by default ({@code management.tracing.propagation.type});
 *   <li>or the OpenTelemetry Java agent, or the OpenTelemetry Spring Boot starter.
 * </ul>
 *
 * <p>When no span is recording (no tracing, Micrometer Tracing over Brave, a background thread such as the
 * completer's) this listener does nothing. Registered by {@link IdemTracingAutoConfiguration}; an application's own
 * bean of this type replaces it.
 */
public final class OpenTelemetryListener implements IdemListener {
  /** Span attribute: the request's idempotency key. */
  public static final String IDEMPOTENCY_KEY = "idem.idempotency_key";
  /** Span attribute: the operation's name, such as {@code POST /orders}. */
  public static final String OPERATION = "idem.operation";
  /** Span attribute: what Idem decided. */
  public static final String OUTCOME = "idem.outcome";
  /** Span attribute: the client's attempt number, from its {@code Idempotency-Attempt} header. */
  public static final String ATTEMPT = "idem.attempt";
  /** Span attribute: on a replay, how old the key's record is, in milliseconds. */
  public static final String KEY_AGE_MS = "idem.key_age_ms";

  private static final AttributeKey<String> KEY_ATTRIBUTE = AttributeKey.stringKey(IDEMPOTENCY_KEY);
  private static final AttributeKey<String> OPERATION_ATTRIBUTE = AttributeKey.stringKey(OPERATION);
  private static final AttributeKey<String> OUTCOME_ATTRIBUTE = AttributeKey.stringKey(OUTCOME);
  private static final AttributeKey<Long> ATTEMPT_ATTRIBUTE = AttributeKey.longKey(ATTEMPT);
  private static final AttributeKey<Long> KEY_AGE_ATTRIBUTE = AttributeKey.longKey(KEY_AGE_MS);

  private final ThreadLocal<Long> attempt = new ThreadLocal<>();

  /** A listener; register it as an {@link IdemListener} bean, with an {@link AttemptHeaderFilter} for the attempt. */
  public OpenTelemetryListener() {}

  @Override
  public void onExecution(String instance, Execution execution, Duration elapsed) {
    Span span = Span.current();
    if (!span.isRecording()) {
      return;
    }
    describe(span, execution.key(), OutcomeNames.of(execution.outcome()));
    if (execution.outcome() == Execution.Outcome.REPLAYED && execution.keyAge() != null) {
      span.setAttribute(KEY_AGE_ATTRIBUTE, execution.keyAge().toMillis());
    }
  }

  /** An exception released the key (a not-kept answer is told to {@link #onExecution}). */
  @Override
  public void onReleased(String instance, RecordKey key, Throwable cause) {
    Span span = Span.current();
    if (cause == null || !span.isRecording()) {
      return;
    }
    describe(span, key, "released");
  }

  private void describe(Span span, RecordKey key, String outcome) {
    span.setAttribute(KEY_ATTRIBUTE, key.key().value());
    span.setAttribute(OPERATION_ATTRIBUTE, key.operation().name());
    span.setAttribute(OUTCOME_ATTRIBUTE, outcome);
    Long n = attempt.get();
    if (n != null) {
      span.setAttribute(ATTEMPT_ATTRIBUTE, n);
    }
  }

  /**
   * Makes {@code n} the attempt of the request on this thread ({@code null}: none) and returns the one before, which
   * the caller restores when the request ends.
   */
  Long attempt(Long n) {
    Long previous = attempt.get();
    if (n == null) {
      attempt.remove();
    } else {
      attempt.set(n);
    }
    return previous;
  }
}
