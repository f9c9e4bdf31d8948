package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import dev.idem.retry.RetryBudget;
import dev.idem.retry.RetryBudgetExhaustedException;
import dev.idem.retry.spi.RetryListener;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** {@code Builder.retryListener}: the retry loop's events reach the application's listener as well as the client. */
class RetryListenerTest {
  private final ClientFixture fixture = new ClientFixture();
  private final Recording recording = new Recording();

  private static byte[] body() {
    return "{\"amount\":1}".getBytes(StandardCharsets.UTF_8);
  }

  /** Every event as a line, and the last success's result and failure. */
  static final class Recording implements RetryListener {
    final List<String> events = new CopyOnWriteArrayList<>();
    volatile Object result;
    volatile Throwable failure;
    volatile Throwable cause;

    @Override
    public void onAttempt(String name, int attempt) {
      events.add(name + " attempt " + attempt);
    }

    @Override
    public void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause) {
      this.cause = cause;
      events.add(name + " retry after " + attempt + " in " + delay.toMillis() + " ms, cause "
          + (cause == null ? "result" : cause.getClass().getSimpleName()));
    }

    @Override
    public void onSuccess(String name, int attempts, Object result) {
      this.result = result;
      events.add(name + " success after " + attempts);
    }

    @Override
    public void onFailure(String name, int attempts, Throwable failure) {
      this.failure = failure;
      events.add(name + " failure after " + attempts + ": " + failure.getClass().getSimpleName());
    }

    @Override
    public void onBudgetRefused(String name, int attempt) {
      events.add(name + " budget refused after " + attempt);
    }
  }

  /** Throws from every event. */
  static final class Throwing implements RetryListener {
    @Override
    public void onAttempt(String name, int attempt) {
      throw new IllegalStateException("onAttempt breaks its contract");
    }

    @Override
    public void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause) {
      throw new IllegalStateException("onRetryScheduled breaks its contract");
    }

    @Override
    public void onSuccess(String name, int attempts, Object result) {
      throw new IllegalStateException("onSuccess breaks its contract");
    }

    @Override
    public void onFailure(String name, int attempts, Throwable failure) {
      throw new IllegalStateException("onFailure breaks its contract");
    }

    @Override
    public void onBudgetRefused(String name, int attempt) {
      throw new IllegalStateException("onBudgetRefused breaks its contract");
    }
  }

  @Test
  void aRetriedAnswerIsARetryCausedByTheResultAndTheSuccessHasTheResponse() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      IdempotentHttpClient client = fixture.builder().retryListener(recording).build();

      Response response = client.send(Intent.post(server.uri("/pay"), body()));

      assertThat(response.status()).isEqualTo(201);
      assertThat(recording.events).containsExactly(
          "test-client attempt 1",
          "test-client retry after 1 in 100 ms, cause result",
          "test-client attempt 2",
          "test-client success after 2");
      assertThat(recording.result).isInstanceOfSatisfying(Response.class, r -> {
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.key()).isEqualTo(response.key());
        assertThat(r.attempts()).hasSize(2);
      });
    }
  }

  @Test
  void aRetriedAnswerReachesTheListenerAsTheResponseThatWasRetried() throws IOException {
    List<Object> results = new CopyOnWriteArrayList<>();
    List<Throwable> causes = new CopyOnWriteArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override
      public void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause, Object result) {
        causes.add(cause);
        results.add(result);
      }
    };
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      IdempotentHttpClient client = fixture.builder().retryListener(listener).build();

      Response response = client.send(Intent.post(server.uri("/pay"), body()));

      assertThat(causes).containsExactly((Throwable) null);
      assertThat(results).singleElement().isInstanceOfSatisfying(Response.class, r -> {
        assertThat(r.status()).isEqualTo(503);
        assertThat(r.key()).isEqualTo(response.key());
      });
    }
  }

  @Test
  void aConnectionFailureIsARetryCausedByItsException() throws IOException {
    try (TestServer server = new TestServer(Reply.disconnect(), Reply.status(201))) {
      IdempotentHttpClient client = fixture.builder().retryListener(recording).build();

      client.send(Intent.post(server.uri("/pay"), body()));

      assertThat(recording.cause).isInstanceOf(IOException.class);
      assertThat(recording.events).last().isEqualTo("test-client success after 2");
    }
  }

  @Test
  void aRetryTheBudgetRefusesIsABudgetRefusalAndAFailure() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      IdempotentHttpClient client = fixture.builder().retryListener(recording)
          .budgetPerDestination(() -> RetryBudget.ratio(0.0, 0, Duration.ofMinutes(1), fixture.clock))
          .build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(IntentPendingException.class)
          .hasMessageContaining("retry budget refused");

      assertThat(recording.events).containsExactly(
          "test-client attempt 1",
          "test-client budget refused after 1",
          "test-client failure after 1: RetryBudgetExhaustedException");
      assertThat(recording.failure).isInstanceOf(RetryBudgetExhaustedException.class);
    }
  }

  @Test
  void aPayloadMismatchIsAFailureWithTheMismatch() throws IOException {
    try (TestServer server = new TestServer(Reply.problem(422, IdempotentHttpClient.PAYLOAD_MISMATCH, false))) {
      IdempotentHttpClient client = fixture.builder().retryListener(recording).build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(PayloadMismatchException.class);

      assertThat(recording.events).containsExactly(
          "test-client attempt 1", "test-client failure after 1: PayloadMismatchException");
    }
  }

  @Test
  void anUnsafeIntentWithoutAKeyIsSentOutsideTheLoopAndMakesNoEvent() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      IdempotentHttpClient client = fixture.builder().retryListener(recording).build();

      assertThat(client.send(Intent.post(server.uri("/pay"), body()).withoutKey()).status()).isEqualTo(503);

      assertThat(recording.events).isEmpty();
    }
  }

  @Test
  void aListenerThatThrowsBreaksNeitherTheCallNorTheClientsOwnUseOfTheEvents() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      IdempotentHttpClient client = fixture.builder().retryListener(new Throwing()).build();

      Response response = client.send(Intent.post(server.uri("/pay"), body()));

      assertThat(response.status()).isEqualTo(201);
      assertThat(response.attempts()).extracting(Attempt::delayMillis).containsExactly(0L, 100L);
      assertThat(fixture.sleeper.delays).containsExactly(Duration.ofMillis(100));
    }
  }

  @Test
  void aListenerThatThrowsOnABudgetRefusalLeavesTheRefusalInTheAttemptLog() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      IdempotentHttpClient client = fixture.builder().retryListener(new Throwing())
          .budgetPerDestination(() -> RetryBudget.ratio(0.0, 0, Duration.ofMinutes(1), fixture.clock))
          .build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOf(IntentPendingException.class)
          .hasCauseInstanceOf(RetryBudgetExhaustedException.class)
          .satisfies(e -> assertThat(((IntentPendingException) e).attempts()).singleElement()
              .satisfies(a -> assertThat(a.notes()).contains("retry budget refused")));
    }
  }

  @Test
  void theBuilderRefusesANullListener() {
    assertThatThrownBy(() -> IdempotentHttpClient.builder().retryListener(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("retryListener");
  }
}
