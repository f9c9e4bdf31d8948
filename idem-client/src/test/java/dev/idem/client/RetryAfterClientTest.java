package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import dev.idem.retry.Backoff;
import dev.idem.retry.Jitter;
import dev.idem.retry.RetryDeadlineExceededException;
import dev.idem.retry.RetryPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Retry-After in both forms as a floor on the delay, a hint past the deadline, and one past maxRetryAfter. */
class RetryAfterClientTest {
  private final ClientFixture fixture = new ClientFixture();
  @TempDir Path dir;

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
      assertWaitedFor(fixture.sleeper.delays, Duration.ofSeconds(3));
      assertThat(response.attempts().get(0).notes()).contains("in progress", "Retry-After 3000 ms");
    }
  }

  @Test
  void delaySecondsIsAFloorOverTheBackoff() throws IOException {
    try (TestServer server = new TestServer(Reply.status(429).header("Retry-After", "2"), Reply.status(200))) {
      fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertWaitedFor(fixture.sleeper.delays, Duration.ofSeconds(2));
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
      assertWaitedFor(fixture.sleeper.delays, Duration.ofSeconds(5));
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

  /** The fixture's policy without a deadline and without an attempt timeout. */
  private static RetryPolicy<Object> noDeadline() {
    return ClientFixture.policy().toBuilder().noDeadline().build();
  }

  @Test
  void withoutDeadlineARetryAfterOverTheDefaultMaximumEndsAtOnce() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503).header("Retry-After", "86400"), Reply.status(200));
        FileJournal journal = FileJournal.open(dir.resolve("pending.journal"))) {
      Intent intent = Intent.post(server.uri("/pay"), body());
      IdempotentHttpClient client = fixture.builder().policy(noDeadline()).journal(journal).build();

      assertThatThrownBy(() -> client.send(intent))
          .isInstanceOfSatisfying(IntentPendingException.class, e -> {
            assertThat(e.getCause()).isInstanceOfSatisfying(RetryAfterTooLongException.class, t -> {
              assertThat(t.retryAfter()).isEqualTo(Duration.ofDays(1));
              assertThat(t.max()).isEqualTo(IdempotentHttpClient.DEFAULT_MAX_RETRY_AFTER);
              assertThat(t.header()).isEqualTo("86400");
              assertThat(t.status()).isEqualTo(503);
            });
            assertThat(e.getMessage()).contains("Retry-After: 86400", "maxRetryAfter", "60000 ms");
            assertThat(e.lastResponse()).hasValueSatisfying(r -> assertThat(r.status()).isEqualTo(503));
            assertThat(e.attempts()).hasSize(1);
            assertThat(e.attempts().get(0).notes()).contains("over maxRetryAfter");
          });
      assertThat(fixture.sleeper.delays).isEmpty();
      assertThat(server.received).hasSize(1);
      assertThat(journal.pending()).hasSize(1);
    }
  }

  @Test
  void withoutDeadlineAnHttpDateFarAheadEndsAtOnceAtTheConfiguredMaximum() throws IOException {
    DateTimeFormatter http = DateTimeFormatter.RFC_1123_DATE_TIME;
    ZonedDateTime now = fixture.clock.instant().atZone(ZoneOffset.UTC);
    String unavailable = "HTTP/1.1 503 Service Unavailable\r\nDate: " + http.format(now) + "\r\nRetry-After: "
        + http.format(now.plusDays(30)) + "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    String ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    try (RawServer server = new RawServer(unavailable, ok)) {
      IdempotentHttpClient client =
          fixture.builder().policy(noDeadline()).maxRetryAfter(Duration.ofSeconds(5)).build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOfSatisfying(IntentPendingException.class, e -> assertThat(e.getCause())
              .isInstanceOfSatisfying(RetryAfterTooLongException.class, t -> {
                assertThat(t.retryAfter()).isEqualTo(Duration.ofDays(30));
                assertThat(t.max()).isEqualTo(Duration.ofSeconds(5));
              }));
      assertThat(fixture.sleeper.delays).isEmpty();
      assertThat(server.requestHeads).hasSize(1);
    }
  }

  @Test
  void aRetryAfterAtTheMaximumIsWaitedFor() throws IOException {
    try (TestServer server = new TestServer(Reply.status(429).header("Retry-After", "5"), Reply.status(200))) {
      IdempotentHttpClient client =
          fixture.builder().policy(noDeadline()).maxRetryAfter(Duration.ofSeconds(5)).build();

      Response response = client.send(Intent.post(server.uri("/pay"), body()));

      assertThat(response.status()).isEqualTo(200);
      assertWaitedFor(fixture.sleeper.delays, Duration.ofSeconds(5));
    }
  }

  @Test
  void withADeadlineAndNoMaximumSetAHintThatFitsInTheDeadlineIsWaitedFor() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503).header("Retry-After", "120"), Reply.status(200))) {
      RetryPolicy<Object> tenMinutes = noDeadline().toBuilder().deadline(Duration.ofMinutes(10)).build();
      IdempotentHttpClient client = fixture.builder().policy(tenMinutes).build();

      Response response = client.send(Intent.post(server.uri("/pay"), body()));

      assertThat(response.status()).isEqualTo(200);
      assertWaitedFor(fixture.sleeper.delays, Duration.ofSeconds(120));
    }
  }

  @Test
  void aMaximumSetAppliesWithADeadlineToo() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503).header("Retry-After", "120"), Reply.status(200))) {
      RetryPolicy<Object> tenMinutes = noDeadline().toBuilder().deadline(Duration.ofMinutes(10)).build();
      IdempotentHttpClient client = fixture.builder().policy(tenMinutes).maxRetryAfter(Duration.ofSeconds(30)).build();

      assertThatThrownBy(() -> client.send(Intent.post(server.uri("/pay"), body())))
          .isInstanceOfSatisfying(IntentPendingException.class, e -> assertThat(e.getCause())
              .isInstanceOfSatisfying(RetryAfterTooLongException.class,
                  t -> assertThat(t.max()).isEqualTo(Duration.ofSeconds(30))));
      assertThat(fixture.sleeper.delays).isEmpty();
      assertThat(server.received).hasSize(1);
    }
  }

  @Test
  void theDefaultMaximumIsAtLeastThePolicysBackoffCap() {
    RetryPolicy<Object> slow = noDeadline().toBuilder()
        .backoff(Backoff.exponential(Duration.ofSeconds(1), Duration.ofMinutes(5), Jitter.NONE)).build();

    assertThat(slow.maxRetryAfter()).contains(Duration.ofMinutes(5));
    assertThat(noDeadline().maxRetryAfter()).contains(Duration.ofSeconds(60));
  }

  @Test
  void maxRetryAfterIsValidatedUpFront() {
    IdempotentHttpClient.Builder b = IdempotentHttpClient.builder();
    for (Duration bad : List.of(Duration.ZERO, Duration.ofMillis(-1), Duration.ofDays(2))) {
      assertThatThrownBy(() -> b.maxRetryAfter(bad))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxRetryAfter");
    }
    assertThatThrownBy(() -> b.maxRetryAfter(null)).isInstanceOf(NullPointerException.class);
  }

  /**
   * One wait for the server's hint, per idem-retry's rule: the hint plus a jitter of at most a tenth of it (and at
   * most the backoff cap), drawn from the retry's random source.
   */
  private static void assertWaitedFor(List<Duration> delays, Duration hint) {
    assertThat(delays).singleElement().satisfies(d -> assertThat(d).isBetween(hint, hint.plus(hint.dividedBy(10))));
  }
}
