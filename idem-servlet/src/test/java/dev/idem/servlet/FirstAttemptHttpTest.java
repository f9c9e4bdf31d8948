package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code Idempotency-Attempt: 1} on an atomic route: the handler runs without a look-up before it, so a duplicate
 * first attempt runs it again, collides, rolls back and replays; a retry (attempt 2) still reads the record first and
 * never runs the handler; with {@code firstAttemptSkipsLookup(false)} every request reads first. On a phased route the
 * same holds for the first phase. On H2 with Jetty and on PostgreSQL with Tomcat.
 */
class FirstAttemptHttpTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static HttpResponse<String> post(TestService service, String key, int attempt) throws Exception {
    return post(service, "/orders", key, attempt);
  }

  private static HttpResponse<String> post(TestService service, String path, String key, int attempt)
      throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(service.url(path)))
        .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer alice")
        .header("Content-Type", "application/json").header("Idempotency-Key", key)
        .header("Idempotency-Attempt", Integer.toString(attempt))
        .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}", StandardCharsets.UTF_8)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static int runs(String key) {
    AtomicInteger n = TestService.ORDER_RUNS.get(key);
    return n == null ? 0 : n.get();
  }

  private static int creates(String key) {
    AtomicInteger n = TestService.PAYMENT_CREATES.get(key);
    return n == null ? 0 : n.get();
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void aDuplicateFirstAttemptRunsTheHandlerAndRollsBackWhileARetryReadsFirst(String db, String container)
      throws Exception {
    try (TestService service = new TestService(db, container, b -> b)) {
      String key = "first-" + UUID.randomUUID();

      HttpResponse<String> first = post(service, key, 1);
      HttpResponse<String> duplicateFirst = post(service, key, 1);
      int afterFirsts = runs(key);
      HttpResponse<String> retry = post(service, key, 2);

      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(duplicateFirst.body()).isEqualTo(first.body());
      assertThat(duplicateFirst.headers().firstValue("Idempotency-Status")).hasValue("replayed");
      assertThat(afterFirsts).as("the duplicate first attempt ran the handler, then rolled it back").isEqualTo(2);
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(runs(key)).as("a retry reads the record before the work").isEqualTo(2);
      assertThat(service.orders("alice", key)).as("committed orders").isEqualTo(1);
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void turnedOffEveryRequestReadsTheRecordFirst(String db, String container) throws Exception {
    try (TestService service = new TestService(db, container, b -> b.firstAttemptSkipsLookup(false))) {
      String key = "first-off-" + UUID.randomUUID();

      HttpResponse<String> first = post(service, key, 1);
      HttpResponse<String> duplicateFirst = post(service, key, 1);

      assertThat(duplicateFirst.body()).isEqualTo(first.body());
      assertThat(runs(key)).isEqualTo(1);
      assertThat(service.orders("alice", key)).isEqualTo(1);
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void onAPhasedRouteADuplicateFirstAttemptRollsItsFirstPhaseBackWhileARetryReadsFirst(String db, String container)
      throws Exception {
    try (TestService service = new TestService(db, container, b -> b)) {
      String key = "phased-first-" + UUID.randomUUID();
      int paymentsBefore = service.payments("alice");

      HttpResponse<String> first = post(service, "/payments", key, 1);
      HttpResponse<String> duplicateFirst = post(service, "/payments", key, 1);
      int afterFirsts = creates(key);
      HttpResponse<String> retry = post(service, "/payments", key, 2);

      assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
      assertThat(duplicateFirst.body()).isEqualTo(first.body());
      assertThat(duplicateFirst.headers().firstValue("Idempotency-Status")).hasValue("replayed");
      assertThat(afterFirsts).as("the duplicate first attempt ran the first phase, then rolled it back").isEqualTo(2);
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(creates(key)).as("a retry reads the record before the first phase").isEqualTo(2);
      assertThat(service.payments("alice") - paymentsBefore).as("committed payments").isEqualTo(1);
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void turnedOffForPhasedRoutesOnlyTheyReadTheRecordFirst(String db, String container) throws Exception {
    try (TestService service = new TestService(db, container, b -> b.firstAttemptSkipsLookup(true, false))) {
      String payment = "phased-off-" + UUID.randomUUID();
      String order = "atomic-on-" + UUID.randomUUID();

      HttpResponse<String> first = post(service, "/payments", payment, 1);
      HttpResponse<String> duplicateFirst = post(service, "/payments", payment, 1);
      post(service, order, 1);
      post(service, order, 1);

      assertThat(duplicateFirst.body()).isEqualTo(first.body());
      assertThat(creates(payment)).isEqualTo(1);
      assertThat(runs(order)).as("atomic routes still skip it").isEqualTo(2);
    }
  }
}
