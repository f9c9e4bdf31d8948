package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import dev.idem.retry.RetryDeadlineExceededException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import org.junit.jupiter.api.Test;

/** Retry-After in both forms as a floor on the delay, and a hint past the deadline. */
class RetryAfterClientTest {
  private final ClientFixture fixture = new ClientFixture();

  private static byte[] body() {
    return "{}".getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void inProgressWaitsForRetryAfterThenSucceeds() throws IOException {
    try (TestServer server = new TestServer(
        Reply.problem(409, IdempotentHttpClient.IN_PROGRESS, true).header("Retry-After", "3"),
        Reply.status(201).header("Idempotency-Status", "replayed"))) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(response.status()).isEqualTo(201);
      assertThat(response.isReplayed()).isTrue();
      assertThat(fixture.sleeper.delays).containsExactly(Duration.ofSeconds(3));
      assertThat(response.attempts().get(0).notes()).contains("in progress", "Retry-After 3000 ms");
    }
  }

  @Test
  void delaySecondsIsAFloorOverTheBackoff() throws IOException {
    try (TestServer server = new TestServer(Reply.status(429).header("Retry-After", "2"), Reply.status(200))) {
      fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(fixture.sleeper.delays).containsExactly(Duration.ofSeconds(2));
    }
  }

  @Test
  void backoffWinsOverASmallerHint() throws IOException {
    try (TestServer server = new TestServer(
        Reply.status(503), Reply.status(503).header("Retry-After", "0"), Reply.status(200))) {
      fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(fixture.sleeper.delays).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200));
    }
  }

  @Test
  void httpDateIsReadAgainstTheServersSkewedDateHeader() throws IOException {
    // the server's clock is one hour ahead of ours; it asks for 5 s in its own time
    ZonedDateTime serverNow = fixture.clock.instant().atZone(ZoneOffset.UTC).plusHours(1);
    DateTimeFormatter http = DateTimeFormatter.RFC_1123_DATE_TIME;
    String unavailable = "HTTP/1.1 503 Service Unavailable\r\nDate: " + http.format(serverNow) + "\r\nRetry-After: "
        + http.format(serverNow.plusSeconds(5)) + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    String ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    try (RawServer server = new RawServer(unavailable, ok)) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(response.status()).isEqualTo(200);
      assertThat(fixture.sleeper.delays).containsExactly(Duration.ofSeconds(5));
      assertThat(server.requestHeads).hasSize(2);
    }
  }

  @Test
  void hintPastTheDeadlineEndsAtOnce() throws IOException {
    try (TestServer server = new TestServer(
        Reply.problem(409, IdempotentHttpClient.IN_PROGRESS, true).header("Retry-After", "60"), Reply.status(200))) {
      Intent intent = Intent.post(server.uri("/pay"), body()).withTimeout(Duration.ofSeconds(10));

      assertThatThrownBy(() -> fixture.client().send(intent))
          .isInstanceOfSatisfying(IntentPendingException.class, e -> {
            assertThat(e.getCause()).isInstanceOfSatisfying(RetryDeadlineExceededException.class,
                d -> assertThat(d.retryAfterHint()).isEqualTo(Duration.ofSeconds(60)));
            assertThat(e.getMessage()).contains("Retry-After", "deadline");
            assertThat(e.attempts()).hasSize(1);
          });
      assertThat(fixture.sleeper.delays).isEmpty();
      assertThat(server.received).hasSize(1);
    }
  }
}
