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
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link OpenTelemetryTracing}: an internal span per call, a client span per attempt under it, their attributes, and
 * the trace context on the wire.
 */
class OpenTelemetryTracingTest {
  private static final AttributeKey<String> KEY = AttributeKey.stringKey("idem.idempotency_key");
  private static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("idem.attempt");
  private static final AttributeKey<Long> ATTEMPTS = AttributeKey.longKey("idem.attempts");
  private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("idem.outcome");
  private static final AttributeKey<String> CLIENT = AttributeKey.stringKey("idem.client");
  private static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
  private static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
  private static final AttributeKey<String> ERROR_TYPE = AttributeKey.stringKey("error.type");

  @TempDir Path dir;

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

  /** The attempt spans, in the order they ended. */
  private List<SpanData> attemptSpans() {
    return exporter.getFinishedSpanItems().stream().filter(s -> s.getKind() == SpanKind.CLIENT).toList();
  }

  /** The call spans, in the order they ended. */
  private List<SpanData> callSpans() {
    return exporter.getFinishedSpanItems().stream()
        .filter(s -> s.getName().equals(OpenTelemetryTracing.CALL_SPAN_NAME)).toList();
  }

  private static boolean noSpanIsCurrent() {
    return !Span.current().getSpanContext().isValid();
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

      List<SpanData> spans = attemptSpans();
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

      List<SpanData> spans = attemptSpans();
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
  void withoutACallerSpanTheAttemptsOfOneCallShareOneTraceUnderTheCallSpan() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      Response response = tracedClient().send(Intent.post(server.uri("/pay"), body()).withKey("order-7"));

      SpanData call = callSpans().get(0);
      List<SpanData> attempts = attemptSpans();
      assertThat(response.status()).isEqualTo(201);
      assertThat(exporter.getFinishedSpanItems()).hasSize(3);
      assertThat(call.getKind()).isEqualTo(SpanKind.INTERNAL);
      assertThat(call.getParentSpanContext().isValid()).as("the call span is a root").isFalse();
      assertThat(call.getAttributes().get(KEY)).isEqualTo("order-7");
      assertThat(call.getAttributes().get(CLIENT)).isEqualTo("test-client");
      assertThat(call.getAttributes().get(OUTCOME)).isEqualTo("success");
      assertThat(call.getAttributes().get(ATTEMPTS)).isEqualTo(2L);
      assertThat(call.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
      assertThat(attempts).hasSize(2).allSatisfy(span -> {
        assertThat(span.getTraceId()).isEqualTo(call.getTraceId());
        assertThat(span.getParentSpanId()).isEqualTo(call.getSpanId());
      });
      assertThat(server.received).hasSize(2);
      for (int i = 0; i < 2; i++) {
        String[] sent = traceparent(server.received.get(i));
        assertThat(sent[0]).as("trace id of attempt %d", i + 1).isEqualTo(call.getTraceId());
        assertThat(sent[1]).as("parent of the server's span, attempt %d", i + 1)
            .isEqualTo(attempts.get(i).getSpanId());
      }
      assertThat(noSpanIsCurrent()).isTrue();
    }
  }

  @Test
  void withACallerSpanTheCallSpanIsItsChildAndTheCallersSpanIsCurrentAgainAfterwards() throws IOException {
    try (TestServer server = new TestServer(Reply.status(500), Reply.status(200))) {
      IdempotentHttpClient client = tracedClient();
      Span parent = openTelemetry.getTracer("test").spanBuilder("checkout").startSpan();
      Span currentAfterwards;

      Scope scope = parent.makeCurrent();
      try {
        client.send(Intent.post(server.uri("/pay"), body()));
        currentAfterwards = Span.current();
      } finally {
        scope.close();
        parent.end();
      }

      SpanData call = callSpans().get(0);
      assertThat(currentAfterwards).isSameAs(parent);
      assertThat(call.getTraceId()).isEqualTo(parent.getSpanContext().getTraceId());
      assertThat(call.getParentSpanId()).isEqualTo(parent.getSpanContext().getSpanId());
      assertThat(attemptSpans()).hasSize(2).allSatisfy(span -> {
        assertThat(span.getTraceId()).isEqualTo(parent.getSpanContext().getTraceId());
        assertThat(span.getParentSpanId()).isEqualTo(call.getSpanId());
      });
      assertThat(server.received).allSatisfy(
          r -> assertThat(traceparent(r)[0]).isEqualTo(parent.getSpanContext().getTraceId()));
    }
  }

  @Test
  void callsThatEndWithoutAFinalAnswerEndTheirSpanAsPendingWithTheAttemptsSent() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      assertThatThrownBy(() -> tracedClient().send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(IntentPendingException.class);

      assertThat(callSpans()).singleElement().satisfies(call -> {
        assertThat(call.getAttributes().get(OUTCOME)).isEqualTo("pending");
        assertThat(call.getAttributes().get(ATTEMPTS)).isEqualTo(5L);
        assertThat(call.getAttributes().get(ERROR_TYPE)).isEqualTo(IntentPendingException.class.getName());
        assertThat(call.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
      });
      assertThat(attemptSpans()).hasSize(5);
      assertThat(noSpanIsCurrent()).isTrue();
    }
  }

  @Test
  void aFinalErrorAnswerEndsTheCallSpanAsAFailureWithItsStatus() throws IOException {
    try (TestServer server = new TestServer(Reply.status(404))) {
      tracedClient().send(Intent.post(server.uri("/pay"), body()));

      assertThat(callSpans()).singleElement().satisfies(call -> {
        assertThat(call.getAttributes().get(OUTCOME)).isEqualTo("failure");
        assertThat(call.getAttributes().get(ATTEMPTS)).isEqualTo(1L);
        assertThat(call.getAttributes().get(ERROR_TYPE)).isEqualTo("404");
        assertThat(call.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
      });
    }
  }

  @Test
  void anInterruptWhileWaitingForARetryEndsTheCallSpanAndRestoresTheCallersContext() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      IdempotentHttpClient client = fixture.builder().tracing(OpenTelemetryTracing.of(openTelemetry))
          .sleeper(delay -> {
            throw new InterruptedException("interrupted in the test");
          }).build();

      try {
        assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
            .isInstanceOf(IntentPendingException.class);
      } finally {
        assertThat(Thread.interrupted()).as("the client kept the interrupt").isTrue();
      }

      assertThat(callSpans()).singleElement().satisfies(call -> {
        assertThat(call.getAttributes().get(OUTCOME)).isEqualTo("pending");
        assertThat(call.getAttributes().get(ATTEMPTS)).isEqualTo(1L);
      });
      assertThat(attemptSpans()).singleElement()
          .satisfies(span -> assertThat(span.getParentSpanId()).isEqualTo(callSpans().get(0).getSpanId()));
      assertThat(noSpanIsCurrent()).isTrue();
    }
  }

  @Test
  void aCallThatSendsNothingBecauseTheJournalFailsStillEndsItsSpan() {
    IdempotentHttpClient client = fixture.builder().tracing(OpenTelemetryTracing.of(openTelemetry))
        .journal(new dev.idem.client.spi.PendingJournal() {
          @Override
          public void append(Intent intent) {
            throw new JournalException("the journal's disk is full");
          }

          @Override
          public void complete(String key) {}

          @Override
          public List<Intent> pending() {
            return List.of();
          }

          @Override
          public void close() {}
        }).build();

    assertThatThrownBy(() -> client.send(Intent.post(URI.create("http://127.0.0.1:9/pay"), body())))
        .isInstanceOf(JournalException.class);

    assertThat(attemptSpans()).isEmpty();
    assertThat(callSpans()).singleElement().satisfies(call -> {
      assertThat(call.getAttributes().get(OUTCOME)).isEqualTo("failure");
      assertThat(call.getAttributes().get(ATTEMPTS)).isEqualTo(0L);
      assertThat(call.getAttributes().get(ERROR_TYPE)).isEqualTo(JournalException.class.getName());
    });
    assertThat(noSpanIsCurrent()).isTrue();
  }

  @Test
  void everyResumedIntentIsACallOfItsOwn() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      IdempotentHttpClient client = fixture.builder().journal(journal).tracing(OpenTelemetryTracing.of(openTelemetry))
          .build();
      for (String key : List.of("resume-1", "resume-2")) {
        assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body()).withKey(key)))
            .isInstanceOf(IntentPendingException.class);
      }
      server.script(Reply.status(201));
      exporter.reset();

      List<Resumed> resumed = client.resumePending();

      assertThat(resumed).hasSize(2);
      List<SpanData> calls = callSpans();
      assertThat(calls).extracting(c -> c.getAttributes().get(KEY)).containsExactlyInAnyOrder("resume-1", "resume-2");
      assertThat(calls).allSatisfy(c -> assertThat(c.getAttributes().get(OUTCOME)).isEqualTo("success"));
      assertThat(calls.get(0).getTraceId()).isNotEqualTo(calls.get(1).getTraceId());
      assertThat(attemptSpans()).hasSize(2).allSatisfy(a -> assertThat(a.getParentSpanId())
          .isIn(calls.get(0).getSpanId(), calls.get(1).getSpanId()));
    }
  }

  @Test
  void noCredentialBodyQueryOrUserInfoBecomesAnAttribute() throws IOException {
    try (TestServer server = new TestServer(Reply.problem(503, "DEPENDENCY.unavailable", true), Reply.status(201))) {
      URI withSecrets = URI.create(server.uri("/pay?token=secret-query").toString()
          .replace("http://", "http://user:secret-password@"));

      tracedClient().send(Intent.post(withSecrets, body()).withHeader("Content-Type", "application/json"));

      List<SpanData> spans = exporter.getFinishedSpanItems();
      assertThat(server.received.get(0).header("Authorization")).isEqualTo("Bearer secret-token-7");
      assertThat(spans).hasSize(3).allSatisfy(span -> {
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

      List<SpanData> spans = attemptSpans();
      assertThat(spans).extracting(s -> s.getAttributes().get(OUTCOME)).containsExactly("replayed", "mismatch");
      assertThat(spans).extracting(s -> s.getAttributes().get(STATUS)).containsExactly(201L, 422L);
      assertThat(callSpans()).extracting(s -> s.getAttributes().get(OUTCOME)).containsExactly("replayed", "mismatch");
      assertThat(callSpans().get(1).getAttributes().get(ERROR_TYPE))
          .isEqualTo(PayloadMismatchException.class.getName());
    }
  }

  @Test
  void aRequestWithoutAKeyIsTracedWithoutTheKeyAttribute() throws IOException {
    try (TestServer server = new TestServer(Reply.status(200))) {
      tracedClient().send(Intent.get(server.uri("/pay/1")));

      SpanData span = attemptSpans().get(0);
      assertThat(span.getName()).isEqualTo("idem GET");
      assertThat(callSpans().get(0).getAttributes().get(KEY)).isNull();
      assertThat(span.getAttributes().get(KEY)).isNull();
      assertThat(span.getAttributes().get(ATTEMPT)).isEqualTo(1L);
      assertThat(server.received.get(0).header("traceparent")).isNotNull();
    }
  }

  @Test
  void anAttemptThatEndsWithoutALogLineStillEndsItsSpanAndTheCallSpanAndRestoresTheCallersContext() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201))) {
      IdempotentHttpClient client = fixture.builder().tracing(OpenTelemetryTracing.of(openTelemetry))
          .listener((name, key, attempt) -> {
            throw new IllegalStateException("a listener that breaks its contract");
          }).build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .hasMessageContaining("breaks its contract");

      assertThat(attemptSpans()).singleElement().satisfies(span -> {
        assertThat(span.getAttributes().get(OUTCOME)).isEqualTo("failure");
        assertThat(span.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
      });
      assertThat(callSpans()).singleElement().satisfies(call -> {
        assertThat(call.getAttributes().get(OUTCOME)).isEqualTo("failure");
        assertThat(call.getAttributes().get(ERROR_TYPE)).isEqualTo(IllegalStateException.class.getName());
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
