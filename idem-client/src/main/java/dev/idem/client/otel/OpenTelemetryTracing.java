package dev.idem.client.otel;

import dev.idem.client.Attempt;
import dev.idem.client.spi.ClientTracing;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.net.URI;
import java.util.Locale;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * OpenTelemetry spans for an {@link dev.idem.client.IdempotentHttpClient}: per call (one {@code send}, or one intent
 * of {@code resumePending()}) an {@link SpanKind#INTERNAL INTERNAL} span named {@value #CALL_SPAN_NAME}, a child of
 * the calling thread's current span (the root of a new trace when there is none) and current for the whole call; under
 * it one {@link SpanKind#CLIENT CLIENT} span per attempt, named {@code idem <METHOD>}, current while the attempt is
 * sent, and the attempt's trace context on its request headers ({@code traceparent} and {@code tracestate} with the
 * W3C propagator), so that a traced server continues the trace. All the attempts of one call, retries included, and
 * the server spans they cause are thus one trace, even when the caller traces nothing. When the call ends the calling
 * thread's context is what it was before. Thread-safe.
 *
 * <pre>{@code
 * IdempotentHttpClient client = IdempotentHttpClient.builder()
 *     .tracing(OpenTelemetryTracing.of(openTelemetry))   // or GlobalOpenTelemetry.get()
 *     .build();
 * }</pre>
 *
 * <p>Call span attributes: {@value #CLIENT}, {@value #IDEMPOTENCY_KEY} (absent for a request without a key); when the
 * call ends, {@value #OUTCOME} ({@code success}, {@code replayed}, {@code mismatch}, {@code pending} or
 * {@code failure}, see {@link ClientTracing.CallOutcome}), {@value #ATTEMPTS} (the attempts sent, 0 when nothing was
 * sent) and, unless it ended in {@code success} or {@code replayed}, {@code error.type} (the class of the exception
 * the caller receives, or the status of a final answer of 400 or more) and the span status
 * {@link StatusCode#ERROR ERROR}.
 *
 * <p>Attempt span attributes when the attempt starts: {@value #IDEMPOTENCY_KEY} (absent for a request without a
 * key), {@value #ATTEMPT} (1 for the first attempt), {@value #CLIENT}, {@code http.request.method},
 * {@code server.address} and {@code server.port}; when it ends: {@code http.response.status_code} (absent when no
 * answer came), {@value #OUTCOME} ({@code success}, {@code replayed}, {@code retryable}, {@code mismatch} or
 * {@code failure}, see {@link ClientTracing.AttemptOutcome}) and, for a transport failure or an answer of 400 or more,
 * {@code error.type} and the span status {@link StatusCode#ERROR ERROR}.
 *
 * <p>Of the URI only the host and the port become attributes (never its user info, path or query string); no header
 * value other than the key, no body and no exception message does either.
 *
 * <p>The only class of idem-client that uses the OpenTelemetry API, an optional dependency: the client itself runs
 * without it on the class path, and this class loads only when the application passes it to the builder.
 */
public final class OpenTelemetryTracing implements ClientTracing {
  /** The instrumentation scope name of the tracer. */
  public static final String INSTRUMENTATION_NAME = "dev.idem.client";
  /** Span attribute: the intent's idempotency key. */
  public static final String IDEMPOTENCY_KEY = "idem.idempotency_key";
  /** Span attribute: the attempt number, 1 for the first attempt. */
  public static final String ATTEMPT = "idem.attempt";
  /** Span attribute: what the client made of the attempt, or, on the call span, how the call ended. */
  public static final String OUTCOME = "idem.outcome";
  /** Span attribute: the client's name. */
  public static final String CLIENT = "idem.client";
  /** Call span attribute: the attempts the call sent. */
  public static final String ATTEMPTS = "idem.attempts";
  /** The name of the span of a whole call. */
  public static final String CALL_SPAN_NAME = "idem send";

  private static final AttributeKey<String> KEY_ATTRIBUTE = AttributeKey.stringKey(IDEMPOTENCY_KEY);
  private static final AttributeKey<Long> ATTEMPT_ATTRIBUTE = AttributeKey.longKey(ATTEMPT);
  private static final AttributeKey<String> OUTCOME_ATTRIBUTE = AttributeKey.stringKey(OUTCOME);
  private static final AttributeKey<String> CLIENT_ATTRIBUTE = AttributeKey.stringKey(CLIENT);
  private static final AttributeKey<Long> ATTEMPTS_ATTRIBUTE = AttributeKey.longKey(ATTEMPTS);
  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  private static final AttributeKey<String> SERVER_ADDRESS = AttributeKey.stringKey("server.address");
  private static final AttributeKey<Long> SERVER_PORT = AttributeKey.longKey("server.port");
  private static final AttributeKey<Long> STATUS_CODE = AttributeKey.longKey("http.response.status_code");
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");
  private static final TextMapSetter<BiConsumer<String, String>> SETTER = (headers, name, value) -> {
    if (headers != null) {
      headers.accept(name, value);
    }
  };

  private final Tracer tracer;
  private final TextMapPropagator propagator;

  private OpenTelemetryTracing(OpenTelemetry openTelemetry) {
    this.tracer = openTelemetry.getTracer(INSTRUMENTATION_NAME);
    this.propagator = openTelemetry.getPropagators().getTextMapPropagator();
  }

  /**
   * Spans from {@code openTelemetry}'s tracer provider, and the trace context written by its text map propagator
   * (configure the W3C trace context propagator there, as the SDK's autoconfiguration does by default).
   */
  public static OpenTelemetryTracing of(OpenTelemetry openTelemetry) {
    return new OpenTelemetryTracing(Objects.requireNonNull(openTelemetry, "openTelemetry"));
  }

  /**
   * Starts the call span, a child of the calling thread's current span, and makes it current until
   * {@link CallTrace#end}; each attempt's span is its child.
   */
  @Override
  public CallTrace startCall(String client, String method, URI uri, String key) {
    Context parent = Context.current();
    var builder = tracer.spanBuilder(CALL_SPAN_NAME).setSpanKind(SpanKind.INTERNAL).setParent(parent)
        .setAttribute(CLIENT_ATTRIBUTE, client);
    if (key != null) {
      builder.setAttribute(KEY_ATTRIBUTE, key);
    }
    Span span = builder.startSpan();
    Context context = parent.with(span);
    return new CallSpan(context, span, context.makeCurrent(), client, method, uri, key);
  }

  /**
   * An attempt outside a call span, a child of the calling thread's current span; the client itself starts every
   * attempt from {@link #startCall}.
   */
  @Override
  public AttemptTrace start(String client, String method, URI uri, String key, int attempt,
      BiConsumer<String, String> headers) {
    return attempt(Context.current(), client, method, uri, key, attempt, headers);
  }

  private AttemptTrace attempt(Context parent, String client, String method, URI uri, String key, int attempt,
      BiConsumer<String, String> headers) {
    var builder = tracer.spanBuilder("idem " + method).setSpanKind(SpanKind.CLIENT).setParent(parent)
        .setAttribute(CLIENT_ATTRIBUTE, client)
        .setAttribute(ATTEMPT_ATTRIBUTE, (long) attempt)
        .setAttribute(METHOD, method);
    if (key != null) {
      builder.setAttribute(KEY_ATTRIBUTE, key);
    }
    if (uri.getHost() != null) {
      builder.setAttribute(SERVER_ADDRESS, uri.getHost());
      int port = uri.getPort() != -1 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
      builder.setAttribute(SERVER_PORT, (long) port);
    }
    Span span = builder.startSpan();
    Context context = parent.with(span);
    propagator.inject(context, headers, SETTER);
    Scope scope = context.makeCurrent();
    return (Attempt ended, AttemptOutcome outcome, Throwable failure) -> {
      try {
        if (ended.status() > 0) {
          span.setAttribute(STATUS_CODE, (long) ended.status());
        }
        span.setAttribute(OUTCOME_ATTRIBUTE, outcome(outcome));
        if (failure != null) {
          span.setAttribute(ERROR_TYPE, failure.getClass().getName());
          span.setStatus(StatusCode.ERROR, failure.getClass().getSimpleName());
        } else if (ended.status() >= 400) {
          span.setAttribute(ERROR_TYPE, Integer.toString(ended.status()));
          span.setStatus(StatusCode.ERROR);
        }
      } finally {
        scope.close();
        span.end();
      }
    };
  }

  /** The span of one call, current on the calling thread from {@link #startCall} until {@link #end}. */
  private final class CallSpan implements CallTrace {
    private final Context context;
    private final Span span;
    private final Scope scope;
    private final String client;
    private final String method;
    private final URI uri;
    private final String key;
    private boolean ended;

    CallSpan(Context context, Span span, Scope scope, String client, String method, URI uri, String key) {
      this.context = context;
      this.span = span;
      this.scope = scope;
      this.client = client;
      this.method = method;
      this.uri = uri;
      this.key = key;
    }

    @Override
    public AttemptTrace startAttempt(int attempt, BiConsumer<String, String> headers) {
      return attempt(context, client, method, uri, key, attempt, headers);
    }

    @Override
    public void end(CallOutcome outcome, int attempts, int status, Throwable failure) {
      if (ended) {
        return;
      }
      ended = true;
      try {
        span.setAttribute(OUTCOME_ATTRIBUTE, outcome(outcome));
        span.setAttribute(ATTEMPTS_ATTRIBUTE, (long) attempts);
        if (outcome != CallOutcome.SUCCESS && outcome != CallOutcome.REPLAYED) {
          String type = failure != null ? failure.getClass().getName()
              : status >= 400 ? Integer.toString(status) : "_OTHER";
          span.setAttribute(ERROR_TYPE, type);
          span.setStatus(StatusCode.ERROR);
        }
      } finally {
        scope.close();
        span.end();
      }
    }
  }

  /** The value of {@value #OUTCOME} for {@code outcome}. */
  static String outcome(CallOutcome outcome) {
    switch (outcome) {
      case PAYLOAD_MISMATCH:
        return "mismatch";
      default:
        return outcome.name().toLowerCase(Locale.ROOT);
    }
  }

  /** The value of {@value #OUTCOME} for {@code outcome}. */
  static String outcome(AttemptOutcome outcome) {
    switch (outcome) {
      case PAYLOAD_MISMATCH:
        return "mismatch";
      default:
        return outcome.name().toLowerCase(Locale.ROOT);
    }
  }

  @Override
  public String toString() {
    return "OpenTelemetryTracing[" + INSTRUMENTATION_NAME + "]";
  }
}
