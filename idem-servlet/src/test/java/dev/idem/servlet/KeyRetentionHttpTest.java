package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.OperationPolicy;
import dev.idem.test.MutableClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The two windows of a key over real HTTP (embedded Jetty, H2), on a service whose executor reads a clock the test
 * moves: until the TTL a retry replays; from then until the end of the retention it gets the
 * {@code CONFLICT.idempotency.key_expired} problem and nothing runs; after that the key runs again.
 */
class KeyRetentionHttpTest {
  private static final Duration TTL = OperationPolicy.ofDefaults().ttl();
  private static final Duration RETENTION = OperationPolicy.ofDefaults().retention();

  private final HttpClient http = HttpClient.newHttpClient();
  private final MutableClock clock = MutableClock.startingNow();
  private TestService service;

  @BeforeEach
  void start() throws Exception {
    service = new TestService(TestService.DB_H2, TestService.JETTY, clock, b -> b);
  }

  @AfterEach
  void stop() throws Exception {
    service.close();
  }

  private HttpResponse<String> post(String key, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(service.url("/orders"))).timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer alice").header("Content-Type", "application/json")
        .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aRetryAfterTheTtlIsA422KeyExpiredProblemThatIsNotRetryableAndRunsNothing() throws Exception {
    String key = "k-" + UUID.randomUUID();
    HttpResponse<String> first = post(key, "{\"item\":\"book\"}");
    clock.advance(TTL);

    HttpResponse<String> late = post(key, "{\"item\":\"book\"}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(late.statusCode()).isEqualTo(422);
    assertThat(late.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(late.headers().firstValue("Idempotency-Key")).hasValue(key);
    assertThat(late.headers().firstValue("Idempotency-Status")).isEmpty();
    assertThat(late.body()).contains("\"code\":\"CONFLICT.idempotency.key_expired\"", "\"status\":422",
        "\"retryable\":false", "\"title\":\"Idempotency-Key expired\"", "with a new key",
        "\"expired_at\":\"" + clock.instant() + "\"");
    assertThat(service.orders("alice", key)).as("the order was written once").isEqualTo(1);
  }

  @Test
  void aRetryAfterTheTtlWithAnotherBodyIsStillAMismatch() throws Exception {
    String key = "k-" + UUID.randomUUID();
    post(key, "{\"item\":\"book\"}");
    clock.advance(TTL.plusHours(1));

    HttpResponse<String> other = post(key, "{\"item\":\"lamp\"}");

    assertThat(other.statusCode()).isEqualTo(422);
    assertThat(other.body()).contains("\"code\":\"CONFLICT.idempotency.payload_mismatch\"");
    assertThat(service.orders("alice", key)).isEqualTo(1);
  }

  @Test
  void pastTheRetentionTheKeyRunsAgain() throws Exception {
    String key = "k-" + UUID.randomUUID();
    post(key, "{\"item\":\"book\"}");
    clock.advance(TTL.plus(RETENTION));

    HttpResponse<String> again = post(key, "{\"item\":\"book\"}");

    assertThat(again.statusCode()).isEqualTo(201);
    assertThat(again.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(service.orders("alice", key)).isEqualTo(2);
  }
}
