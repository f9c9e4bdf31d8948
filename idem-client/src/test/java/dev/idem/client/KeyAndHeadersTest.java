package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.client.TestServer.Reply;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Keys per intent, the attempt counter and the remaining deadline on the wire, and the attempt log. */
class KeyAndHeadersTest {
  private final ClientFixture fixture = new ClientFixture();

  private static byte[] body() {
    return "{\"amount\":5}".getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void everyAttemptResendsTheSameKey() throws IOException {
    try (TestServer server =
        new TestServer(Reply.status(503), Reply.disconnect(), Reply.status(500), Reply.status(201))) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), body()));

      List<String> keys = server.headerValues("Idempotency-Key");
      assertThat(keys).hasSize(4).doesNotContainNull().containsOnly(response.key().orElseThrow());
      assertThat(server.received).extracting(TestServer.Received::bodyText).containsOnly("{\"amount\":5}");
    }
  }

  @Test
  void eachIntentGetsAFreshUuidV7() throws IOException {
    try (TestServer server = new TestServer(Reply.status(201))) {
      IdempotentHttpClient client = fixture.client();

      String first = client.send(Intent.post(server.uri("/pay"), body())).key().orElseThrow();
      String second = client.send(Intent.post(server.uri("/pay"), body())).key().orElseThrow();

      assertThat(first).isNotEqualTo(second);
      assertThat(UUID.fromString(first).version()).isEqualTo(7);
      assertThat(UUID.fromString(second).version()).isEqualTo(7);
      assertThat(server.headerValues("Idempotency-Key")).containsExactly(first, second);
    }
  }

  @Test
  void callersKeyIsHonoured() throws IOException {
    try (TestServer server = new TestServer(Reply.status(503), Reply.status(201))) {
      Response response = fixture.client().send(Intent.put(server.uri("/pay/9"), body()).withKey("caller-key-9"));

      assertThat(response.key()).contains("caller-key-9");
      assertThat(server.headerValues("Idempotency-Key")).containsExactly("caller-key-9", "caller-key-9");
    }
  }

  @Test
  void deleteIsUnsafeAndGetsAKey() throws IOException {
    try (TestServer server = new TestServer(Reply.status(204))) {
      Response response = fixture.client().send(Intent.delete(server.uri("/pay/9")));

      assertThat(response.key()).isPresent();
      assertThat(server.received.get(0).header("Idempotency-Key")).isEqualTo(response.key().get());
    }
  }

  @Test
  void safeMethodsCarryNoKeyEvenWhenTheCallerGivesOne() throws IOException {
    try (TestServer server = new TestServer(Reply.status(200))) {
      IdempotentHttpClient client = fixture.client();

      Response get = client.send(Intent.get(server.uri("/pay/1")).withKey("ignored"));
      Response head = client.send(Intent.of("HEAD", server.uri("/pay/1")));

      assertThat(get.key()).isEmpty();
      assertThat(head.key()).isEmpty();
      assertThat(server.headerValues("Idempotency-Key")).containsOnlyNulls();
    }
  }

  @Test
  void attemptHeaderCountsFromOneAndRequestTimeoutDecreases() throws IOException {
    try (TestServer server = new TestServer(
        Reply.status(503), Reply.status(503), Reply.status(503), Reply.status(200))) {
      fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(server.headerValues(IdempotentHttpClient.ATTEMPT_HEADER)).containsExactly("1", "2", "3", "4");
      List<Long> timeouts = server.headerValues(IdempotentHttpClient.REQUEST_TIMEOUT_HEADER).stream()
          .map(Long::parseLong).toList();
      // no jitter: waits of 100, 200 and 400 ms come off the 30 s deadline
      assertThat(timeouts).containsExactly(30_000L, 29_900L, 29_700L, 29_300L);
    }
  }

  @Test
  void intentTimeoutReplacesThePolicyDeadline() throws IOException {
    try (TestServer server = new TestServer(Reply.status(200))) {
      fixture.client().send(Intent.post(server.uri("/pay"), body()).withTimeout(Duration.ofSeconds(2)));

      assertThat(server.received.get(0).header(IdempotentHttpClient.REQUEST_TIMEOUT_HEADER)).isEqualTo("2000");
    }
  }

  @Test
  void configuredAndIntentHeadersAreSent() throws IOException {
    try (TestServer server = new TestServer(Reply.status(200))) {
      IdempotentHttpClient client = fixture.builder().headers(() -> Map.of("Authorization", "Bearer t1")).build();

      client.send(Intent.post(server.uri("/pay"), body()).withHeader("Content-Type", "application/json"));

      assertThat(server.received.get(0).header("Authorization")).isEqualTo("Bearer t1");
      assertThat(server.received.get(0).header("Content-Type")).isEqualTo("application/json");
    }
  }

  @Test
  void attemptLogRecordsDelaysStatusesAndCodesAndReachesTheListener() throws IOException {
    try (TestServer server = new TestServer(
        Reply.problem(503, "DEPENDENCY.unavailable", true), Reply.disconnect(), Reply.status(201))) {
      Response response = fixture.client().send(Intent.post(server.uri("/pay"), body()));

      assertThat(response.attempts()).extracting(Attempt::attempt).containsExactly(1, 2, 3);
      assertThat(response.attempts()).extracting(Attempt::delayMillis).containsExactly(0L, 100L, 200L);
      assertThat(response.attempts()).extracting(Attempt::status).containsExactly(503, 0, 201);
      assertThat(response.attempts()).extracting(Attempt::code).containsExactly("DEPENDENCY.unavailable", null, null);
      assertThat(response.attempts().get(2).notes()).isEqualTo("final: 201");
      assertThat(fixture.heard).isEqualTo(response.attempts());
    }
  }

  @Test
  void clientManagedHeadersAreRejectedOnTheIntent() {
    Intent intent = Intent.post(java.net.URI.create("http://127.0.0.1:1/pay"), body());

    assertThatThrownBy(() -> intent.withHeader("idempotency-key", "k"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("withKey");
    assertThatThrownBy(() -> intent.withHeader("Host", "evil"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("transport");
    assertThatThrownBy(() -> intent.withKey(""))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key");
    assertThatThrownBy(() -> Intent.of("POST", java.net.URI.create("/relative")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("absolute");
  }
}
