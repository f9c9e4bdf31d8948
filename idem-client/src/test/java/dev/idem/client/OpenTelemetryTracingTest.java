package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import dev.idem.client.otel.OpenTelemetryTracing;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link OpenTelemetryTracing}: a client span per attempt, its attributes, and the trace context on the wire. */
class OpenTelemetryTracingTest {
  private static final AttributeKey<String> KEY = AttributeKey.stringKey("idem.idempotency_key");
  private static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("idem.attempt");
  private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("idem.outcome");
  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  private static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");

  private final ClientFixture fixture = new ClientFixture();
  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final SdkTracerProvider tracerProvider =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
  private final OpenTelemetrySdk openTelemetry = OpenTelemetrySdk.builder().setTracerProvider(tracerProvider)
      .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance())).build();

  @AfterEach
  void closeSdk() {
    openTelemetry.close();
  }

  private IdempotentHttpClient tracedClient() {
    return fixture.builder().tracing(OpenTelemetryTracing.of(openTelemetry))
        .headers(() -> Map.of("Authorization", "Bearer secret-token-7")).build();
  }

  private static byte[] body() {
    return "{\"card\":\"secret-card-4111\"}".getBytes(StandardCharsets.UTF_8);
  }

  /** The trace id and the parent span id a request carried in {@code traceparent}. */
  private static String[] traceparent(TestServer.Received received) {
    String value = received.header("traceparent");
    assertThat(value).as("traceparent").matches("00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}");
    String[] parts = value.split("-");
    return new String[] {parts[1], parts[2]};
  }

  @Test
  void everyAttemptIncludingRetriesIsAClientSpanWithTheKeyAndTheAttempt() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.disconnect(), Reply.status(201))) {
      Response response = tracedClient().send(Intent.post(server.uri("/pay"), body()).withKey("order-42"));

      List<SpanData> spans = exporter.getFinishedSpanItems();
      assertThat(response.status()).isEqualTo(201);
      assertThat(spans).hasSize(3).allSatisfy(span -> {
        assertThat(span.getName()).isEqualTo("idem POST");
        assertThat(span.getKind()).isEqualTo(SpanKind.CLIENT);
        assertThat(span.getAttributes().get(KEY)).isEqualTo("order-42");
        assertThat(span.getAttributes().get(METHOD)).isEqualTo("POST");
      });
      assertThat(spans).extracting(s -> s.getAttributes().get(ATTEMPT)).containsExactly(1L, 2L, 3L);
      assertThat(spans).extracting(s -> s.getAttributes().get(OUTCOME))
          .containsExactly("retryable", "retryable", "success");
      assertThat(spans).extracting(s -> s.getAttributes().get(STATUS)).containsExactly(503L, null, 201L);
      assertThat(spans).extracting(s -> s.getStatus().getStatusCode())
          .containsExactly(StatusCode.ERROR, StatusCode.ERROR, StatusCode.UNSET);
    }
  }

  @Test
  void theServerReceivesTheTraceContextOfEachAttemptsSpan() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      tracedClient().send(Intent.post(server.uri("/pay"), body()));

      List<SpanData> spans = exporter.getFinishedSpanItems();
      assertThat(server.received).hasSize(2);
      assertThat(spans).hasSize(2);
      for (int i = 0; i < 2; i++) {
        String[] sent = traceparent(server.received.get(i));
        assertThat(sent[0]).isEqualTo(spans.get(i).getTraceId());
        assertThat(sent[1]).isEqualTo(spans.get(i).getSpanId());
      }
    }
  }

  @Test
  void theCallersCurrentSpanIsTheParentOfEveryAttempt() throws IOException {
    try (TestServer server = new TestServer(Reply.status(500), Reply.status(200))) {
      IdempotentHttpClient client = tracedClient();
      Span parent = openTelemetry.getTracer("test").spanBuilder("checkout").startSpan();

      Scope scope = parent.makeCurrent();
      try {
        client.send(Intent.post(server.uri("/pay"), body()));
      } finally {
        scope.close();
        parent.end();
      }

      List<SpanData> attempts = exporter.getFinishedSpanItems().stream()
          .filter(s -> s.getName().equals("idem POST")).toList();
      assertThat(attempts).hasSize(2).allSatisfy(span -> {
        assertThat(span.getTraceId()).isEqualTo(parent.getSpanContext().getTraceId());
        assertThat(span.getParentSpanId()).isEqualTo(parent.getSpanContext().getSpanId());
      });
      assertThat(server.received).allSatisfy(
          r -> assertThat(traceparent(r)[0]).isEqualTo(parent.getSpanContext().getTraceId()));
    }
  }

  @Test
  void noCredentialOrBodyBecomesAnAttribute() throws IOException {
    try (TestServer server = new TestServer(Reply.problem(503, "DEPENDENCY.unavailable", true), Reply.status(201))) {
      tracedClient().send(Intent.post(server.uri("/pay?token=secret-query"), body())
          .withHeader("Content-Type", "application/json"));

      List<SpanData> spans = exporter.getFinishedSpanItems();
      assertThat(server.received.get(0).header("Authorization")).isEqualTo("Bearer secret-token-7");
      assertThat(spans).hasSize(2).allSatisfy(span -> {
        assertThat(span.getAttributes().asMap().keySet())
            .noneMatch(k -> k.getKey().toLowerCase(java.util.Locale.ROOT).contains("authorization"));
        assertThat(span.getAttributes().asMap().values()).map(String::valueOf)
            .noneMatch(v -> v.contains("secret") || v.contains("Bearer"));
        assertThat(span.getEvents()).isEmpty();
      });
    }
  }

  @Test
  void replayedAnswersAndPayloadMismatchesAreTheirOwnOutcomes() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201).header("Idempotency-Status", "replayed"))) {
      IdempotentHttpClient client = tracedClient();

      client.send(Intent.post(server.uri("/pay"), body()));
      server.script(Reply.problem(422, IdempotentHttpClient.PAYLOAD_MISMATCH, false));
      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(PayloadMismatchException.class);

      List<SpanData> spans = exporter.getFinishedSpanItems();
      assertThat(spans).extracting(s -> s.getAttributes().get(OUTCOME)).containsExactly("replayed", "mismatch");
      assertThat(spans).extracting(s -> s.getAttributes().get(STATUS)).containsExactly(201L, 422L);
    }
  }

  @Test
  void aRequestWithoutAKeyIsTracedWithoutTheKeyAttribute() throws IOException {
    try (TestServer server = new TestServer(Reply.status(200))) {
      tracedClient().send(Intent.get(server.uri("/pay/1")));

      SpanData span = exporter.getFinishedSpanItems().get(0);
      assertThat(span.getName()).isEqualTo("idem GET");
      assertThat(span.getAttributes().get(KEY)).isNull();
      assertThat(span.getAttributes().get(ATTEMPT)).isEqualTo(1L);
      assertThat(server.received.get(0).header("traceparent")).isNotNull();
    }
  }

  @Test
  void anAttemptThatEndsWithoutALogLineStillEndsItsSpanAndRestoresTheCallersContext() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201))) {
      IdempotentHttpClient client = fixture.builder().tracing(OpenTelemetryTracing.of(openTelemetry))
          .listener((name, key, attempt) -> {
            throw new IllegalStateException("a listener that breaks its contract");
          }).build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .hasMessageContaining("breaks its contract");

      assertThat(exporter.getFinishedSpanItems()).singleElement().satisfies(span -> {
        assertThat(span.getAttributes().get(OUTCOME)).isEqualTo("failure");
        assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
      });
      assertThat(Span.fromContext(Context.current()).getSpanContext().isValid()).isFalse();
    }
  }

  @Test
  void withoutTracingNoTraceContextIsSent() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201))) {
      fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(server.received.get(0).header("traceparent")).isNull();
      assertThat(exporter.getFinishedSpanItems()).isEmpty();
    }
  }
}
