package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import dev.idem.retry.RetryExhaustedException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** docs/architecture.md#what-is-retried, row by row: what is retried, what is not, and how many attempts each takes. */
class ClassificationTest {
  private final ClientFixture fixture = new ClientFixture();

  private static byte[] json(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @ParameterizedTest(name = "{0} is retried")
  @ValueSource(ints = {408, 429, 500, 502, 503, 504})
  void retryableStatusIsRetriedUntilSuccess(int status) throws IOException {
    try (TestServer server = new TestServer(Reply.status(status), Reply.status(status), Reply.status(201))) {
      IdempotentHttpClient client = fixture.client();

      Response response = client.send(Intent.post(server.uri("/pay"), json("{\"amount\":1}")));

      assertThat(response.status()).isEqualTo(201);
      assertThat(server.received).hasSize(3);
      assertThat(response.attempts()).extracting(Attempt::status).containsExactly(status, status, 201);
    }
  }

  @ParameterizedTest(name = "{0} is final")
  @ValueSource(ints = {200, 201, 204, 400, 401, 403, 404, 405, 409, 410, 412, 413, 415, 422, 501, 505})
  void otherStatusIsFinalAfterOneAttempt(int status) throws IOException {
    try (TestServer server = new TestServer(Reply.status(status), Reply.status(200))) {
      IdempotentHttpClient client = fixture.client();

      Response response = client.send(Intent.post(server.uri("/pay"), json("{}")));

      assertThat(response.status()).isEqualTo(status);
      assertThat(server.received).hasSize(1);
      assertThat(fixture.sleeper.delays).isEmpty();
    }
  }

  @Test
  void conflictInProgressIsRetried() throws IOException {
    try (TestServer server = new TestServer(
        Reply.problem(409, IdempotentHttpClient.IN_PROGRESS, true).header("Retry-After", "1"), Reply.status(200))) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), json("{}")));

      assertThat(response.status()).isEqualTo(200);
      assertThat(server.received).hasSize(2);
    }
  }

  @Test
  void conflictWithOtherCodeIsFinal() throws IOException {
    try (TestServer server = new TestServer(Reply.problem(409, "CONFLICT.version", null), Reply.status(200))) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), json("{}")));

      assertThat(response.status()).isEqualTo(409);
      assertThat(response.problemCode()).contains("CONFLICT.version");
      assertThat(server.received).hasSize(1);
    }
  }

  @Test
  void serverSaysDoNotRetryOn503() throws IOException {
    try (TestServer server = new TestServer(Reply.problem(503, "DEPENDENCY.unavailable", false), Reply.status(200))) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), json("{}")));

      assertThat(response.status()).isEqualTo(503);
      assertThat(server.received).hasSize(1);
      assertThat(response.attempts()).singleElement().satisfies(a -> {
        assertThat(a.code()).isEqualTo("DEPENDENCY.unavailable");
        assertThat(a.notes()).contains("retryable=false");
      });
    }
  }

  @Test
  void serverSaysRetryableTrueDoesNotMakeA400Retryable() throws IOException {
    try (TestServer server = new TestServer(Reply.problem(400, "VALIDATION.amount", true), Reply.status(200))) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), json("{}")));

      assertThat(response.status()).isEqualTo(400);
      assertThat(server.received).hasSize(1);
    }
  }

  @ParameterizedTest(name = "payload mismatch as {0}")
  @ValueSource(ints = {422, 409})
  void payloadMismatchThrowsTypedExceptionAfterOneAttempt(int status) throws IOException {
    try (TestServer server = new TestServer(
        Reply.problem(status, IdempotentHttpClient.PAYLOAD_MISMATCH, false), Reply.status(200))) {
      Intent intent = Intent.post(server.uri("/pay"), json("{}")).withKey("order-7");

      assertThatThrownBy(() -> fixture.client().send(intent))
          .isInstanceOfSatisfying(PayloadMismatchException.class, e -> {
            assertThat(e.key()).isEqualTo("order-7");
            assertThat(e.status()).isEqualTo(status);
            assertThat(e.detail()).isEqualTo("detail of " + IdempotentHttpClient.PAYLOAD_MISMATCH);
            assertThat(e.attempts()).hasSize(1);
          });
      assertThat(server.received).hasSize(1);
    }
  }

  @Test
  void connectionFailureIsRetried() throws IOException {
    try (TestServer server = new TestServer(Reply.disconnect(), Reply.disconnect(), Reply.status(200))) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), json("{}")));

      assertThat(response.status()).isEqualTo(200);
      assertThat(server.received).hasSize(3);
      assertThat(response.attempts()).extracting(Attempt::status).containsExactly(0, 0, 200);
    }
  }

  @Test
  void refusedConnectionIsRetried() throws IOException {
    try (TestServer server = new TestServer(Reply.status(200))) {
      IdempotentHttpClient client = fixture.builder()
          .httpClient(new FailingFirstHttpClient(ClientFixture.HTTP, 1, () -> new ConnectException("refused")))
          .build();

      Response response = client.send(Intent.post(server.uri("/pay"), json("{}")));

      assertThat(response.status()).isEqualTo(200);
      assertThat(response.attempts()).hasSize(2);
      assertThat(response.attempts().get(0).notes()).contains("refused");
    }
  }

  @Test
  void timeoutIsRetried() throws IOException {
    try (TestServer server = new TestServer(Reply.status(200))) {
      IdempotentHttpClient client = fixture.builder()
          .httpClient(new FailingFirstHttpClient(ClientFixture.HTTP, 2, () -> new HttpTimeoutException("timed out")))
          .build();

      Response response = client.send(Intent.post(server.uri("/pay"), json("{}")));

      assertThat(response.status()).isEqualTo(200);
      assertThat(response.attempts()).extracting(Attempt::status).containsExactly(0, 0, 200);
      assertThat(server.received).hasSize(1);
    }
  }

  @Test
  void retriesEndAtMaxAttemptsWithIntentPending() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503))) {
      assertThatThrownBy(() -> fixture.client().send(Intent.post(server.uri("/pay"), json("{}"))))
          .isInstanceOfSatisfying(IntentPendingException.class, e -> {
            assertThat(e.getCause()).isInstanceOf(RetryExhaustedException.class);
            assertThat(e.attempts()).hasSize(5);
            assertThat(e.key()).isPresent();
            assertThat(e.lastResponse()).hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(503));
          });
      assertThat(server.received).hasSize(5);
    }
  }

  @Test
  void unsafeRequestWithoutKeyIsNeverRetried() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(200))) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), json("{}")).withoutKey());

      assertThat(response.status()).isEqualTo(503);
      assertThat(response.key()).isEmpty();
      assertThat(server.received).hasSize(1);
      assertThat(server.received.get(0).header("Idempotency-Key")).isNull();
    }
  }

  @Test
  void unsafeRequestWithoutKeyIsNotRetriedAfterConnectionFailure() throws IOException {
    try (TestServer server = new TestServer(Reply.disconnect(), Reply.status(200))) {
      assertThatThrownBy(() -> fixture.client().send(Intent.post(server.uri("/pay"), json("{}")).withoutKey()))
          .isInstanceOfSatisfying(IntentPendingException.class, e -> {
            assertThat(e.key()).isEmpty();
            assertThat(e.attempts()).hasSize(1);
          });
      assertThat(server.received).hasSize(1);
    }
  }

  @Test
  void unsafeRequestWithoutKeyIsNotRetriedEvenWhenAPolicyIsRoutedForIoFailures() throws IOException {
    IdempotentHttpClient client = fixture.builder().policy(ClientFixture.policy().toBuilder()
        .policyFor(IOException.class, dev.idem.retry.RetryPolicy.builder().maxAttempts(5).build()).build()).build();
    try (TestServer server = new TestServer(Reply.disconnect(), Reply.status(200))) {
      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), json("{}")).withoutKey()))
          .isInstanceOf(IntentPendingException.class);

      assertThat(server.received).hasSize(1);
    }
  }

  @Test
  void payloadMismatchIsNotRetriedEvenWhenAPolicyIsRoutedForRuntimeExceptions() throws IOException {
    IdempotentHttpClient client = fixture.builder().policy(ClientFixture.policy().toBuilder()
        .policyFor(RuntimeException.class, dev.idem.retry.RetryPolicy.builder().maxAttempts(5).build()).build())
        .build();
    try (TestServer server = new TestServer(Reply.problem(422, "CONFLICT.idempotency.payload_mismatch", false),
        Reply.status(200))) {
      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), json("{}"))))
          .isInstanceOf(PayloadMismatchException.class);

      assertThat(server.received).hasSize(1);
    }
  }

  @Test
  void safeMethodIsRetriedWithoutKey() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(200))) {
      Response response = fixture.client().send(Intent.get(server.uri("/pay/1")));

      assertThat(response.status()).isEqualTo(200);
      assertThat(server.received).hasSize(2);
      assertThat(server.headerValues("Idempotency-Key")).containsOnlyNulls();
    }
  }
}
