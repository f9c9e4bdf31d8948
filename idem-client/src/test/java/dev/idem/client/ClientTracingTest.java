package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import dev.idem.client.spi.ClientTracing;
import dev.idem.client.spi.ClientTracing.AttemptTrace;
import dev.idem.client.spi.ClientTracing.CallOutcome;
import dev.idem.client.spi.ClientTracing.CallTrace;
import dev.idem.core.Deadline;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;

/** The {@link ClientTracing} SPI as the client calls it: a call trace, its attempts nested in it, one end each. */
class ClientTracingTest {
  private final ClientFixture fixture = new ClientFixture();

  private static byte[] body() {
    return "{\"amount\":3}".getBytes(StandardCharsets.UTF_8);
  }

  /** Writes every call of the SPI as a line; sets {@code X-Trace} on each attempt. */
  static final class Recording implements ClientTracing {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public CallTrace startCall(String client, String method, URI uri, String key) {
      events.add("call " + client + " " + method + " " + uri.getPath() + " key " + key);
      return new CallTrace() {
        @Override
        public AttemptTrace startAttempt(int attempt, BiConsumer<String, String> headers) {
          events.add("attempt " + attempt);
          headers.accept("X-Trace", "call-attempt-" + attempt);
          return (ended, outcome, failure) -> events.add("attempt " + ended.attempt() + " ended " + outcome);
        }

        @Override
        public void end(CallOutcome outcome, int attempts, int status, Throwable failure) {
          events.add("call ended " + outcome + ", " + attempts + " attempts, status " + status + ", failure "
              + (failure == null ? null : failure.getClass().getSimpleName()));
        }
      };
    }

    @Override
    public AttemptTrace start(String client, String method, URI uri, String key, int attempt,
        BiConsumer<String, String> headers) {
      throw new AssertionError("the client starts attempts from the call trace");
    }
  }

  @Test
  void attemptsNestInTheirCallAndEachEndsOnce() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      Recording tracing = new Recording();
      IdempotentHttpClient client = fixture.builder().tracing(tracing).build();

      client.send(Intent.post(server.uri("/pay"), body()).withKey("k-1"));

      assertThat(tracing.events).containsExactly(
          "call test-client POST /pay key k-1",
          "attempt 1",
          "attempt 1 ended RETRYABLE",
          "attempt 2",
          "attempt 2 ended SUCCESS",
          "call ended SUCCESS, 2 attempts, status 201, failure null");
      assertThat(server.headerValues("X-Trace")).containsExactly("call-attempt-1", "call-attempt-2");
    }
  }

  @Test
  void aCallWithoutAFinalAnswerEndsPendingWithTheLastStatus() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      Recording tracing = new Recording();
      IdempotentHttpClient client = fixture.builder().tracing(tracing).build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(IntentPendingException.class);

      assertThat(tracing.events).last()
          .isEqualTo("call ended PENDING, 5 attempts, status 503, failure IntentPendingException");
    }
  }

  @Test
  void aCallTheCallersDeadlineEndedBeforeItBeganEndsPendingWithNoAttempt() {
    Recording tracing = new Recording();
    IdempotentHttpClient client = fixture.builder().tracing(tracing).build();

    try (Deadline.Binding b = Deadline.after(Duration.ZERO).enter()) {
      assertThatThrownBy(() -> client.send(Intent.post(URI.create("http://127.0.0.1:9/pay"), body())))
          .isInstanceOf(IntentPendingException.class);
    }

    assertThat(tracing.events).hasSize(2).last()
        .isEqualTo("call ended PENDING, 0 attempts, status 0, failure IntentPendingException");
  }

  @Test
  void aTracingThatTracesAttemptsOnlyIsStartedForEveryAttempt() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      List<Integer> started = new CopyOnWriteArrayList<>();
      ClientTracing attemptsOnly = (client, method, uri, key, attempt, headers) -> {
        started.add(attempt);
        headers.accept("X-Trace", "attempt-" + attempt);
        return AttemptTrace.NONE;
      };

      fixture.builder().tracing(attemptsOnly).build().send(Intent.post(server.uri("/pay"), body()));

      assertThat(started).containsExactly(1, 2);
      assertThat(server.headerValues("X-Trace")).containsExactly("attempt-1", "attempt-2");
    }
  }

  @Test
  void aCallTraceThatThrowsAtItsEndDoesNotTakeTheAnswerAway() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201))) {
      ClientTracing broken = new ClientTracing() {
        @Override
        public CallTrace startCall(String client, String method, URI uri, String key) {
          return new CallTrace() {
            @Override
            public AttemptTrace startAttempt(int attempt, BiConsumer<String, String> headers) {
              return AttemptTrace.NONE;
            }

            @Override
            public void end(CallOutcome outcome, int attempts, int status, Throwable failure) {
              throw new IllegalStateException("a tracing that breaks its contract");
            }
          };
        }

        @Override
        public AttemptTrace start(String client, String method, URI uri, String key, int attempt,
            BiConsumer<String, String> headers) {
          return AttemptTrace.NONE;
        }
      };

      Response response = fixture.builder().tracing(broken).build().send(Intent.post(server.uri("/pay"), body()));

      assertThat(response.status()).isEqualTo(201);
    }
  }
}
