package dev.idem.servlet.deadline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Deadline;
import dev.idem.core.Idem;
import dev.idem.core.memory.InMemoryIdempotencyStore;
import dev.idem.servlet.IdempotencyFilter;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.servlet.spi.ScopeResolver;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The filter in embedded Jetty, driven over HTTP with raw headers. */
class DeadlineFilterHttpTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  private final AtomicInteger handled = new AtomicInteger();
  /** What the handler saw: Deadline.current(), and whether the request attribute was the same deadline. */
  private final AtomicReference<Optional<Deadline>> seen = new AtomicReference<>();
  private final AtomicReference<Boolean> attributeMatches = new AtomicReference<>();
  private DeadlineServer server;

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private void start(DeadlineFilter filter) throws Exception {
    server = new DeadlineServer((request, response) -> {
      handled.incrementAndGet();
      Optional<Deadline> current = Deadline.current();
      seen.set(current);
      attributeMatches.set(current.equals(DeadlineFilter.deadline(request)));
      response.setStatus(200);
      response.setContentType("text/plain");
      response.getWriter().write(current.map(d -> Long.toString(d.remainingMillis())).orElse("none"));
    }, filter);
  }

  private HttpResponse<String> get(String timeout) throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(server.uri("/work")).timeout(Duration.ofSeconds(10)).GET();
    if (timeout != null) {
      b.header("Request-Timeout", timeout);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void noHeaderMeansNoDeadline() throws Exception {
    start(DeadlineFilter.ofDefaults());

    HttpResponse<String> r = get(null);

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("none");
    assertThat(seen.get()).isEmpty();
    assertThat(attributeMatches.get()).isTrue();
  }

  @Test
  void zeroIsRefusedAtOnceAndTheHandlerNeverRuns() throws Exception {
    start(DeadlineFilter.ofDefaults());

    HttpResponse<String> r = get("0");

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
        v -> assertThat(v).startsWith("application/problem+json"));
    assertThat(r.body()).contains("\"code\":\"DEPENDENCY.timeout\"").contains("\"retryable\":true")
        .contains("\"status\":503").contains("Request-Timeout: 0 ms");
    assertThat(handled).hasValue(0);
  }

  @Test
  void malformedHeadersAreHandledAsAbsent() throws Exception {
    start(DeadlineFilter.ofDefaults());
    List<String> malformed = List.of("abc", "-5", "+5", "1.5", "5s", "1,2", "0x10", "12345678901", "5 5");

    for (String value : malformed) {
      HttpResponse<String> r = get(value);

      assertThat(r.statusCode()).as("Request-Timeout: %s", value).isEqualTo(200);
      assertThat(r.body()).as("Request-Timeout: %s", value).isEqualTo("none");
    }
    assertThat(handled).hasValue(malformed.size());
  }

  @Test
  void theHandlerSeesAboutTheSentBudget() throws Exception {
    start(DeadlineFilter.ofDefaults());

    HttpResponse<String> r = get("2000");

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(Long.parseLong(r.body())).isBetween(1000L, 2000L);
    assertThat(seen.get()).isPresent();
    assertThat(attributeMatches.get()).isTrue();
  }

  @Test
  void hugeBudgetsAreCappedAtOneHour() throws Exception {
    start(DeadlineFilter.ofDefaults());

    HttpResponse<String> r = get("9999999999");

    assertThat(Long.parseLong(r.body())).isBetween(3_590_000L, 3_600_000L);
  }

  @Test
  void aServerMaxCapsTheBudgetAndAppliesWithoutAHeader() throws Exception {
    start(DeadlineFilter.builder().max(Duration.ofMillis(700)).build());

    HttpResponse<String> capped = get("60000");
    HttpResponse<String> absent = get(null);
    HttpResponse<String> smaller = get("300");

    assertThat(Long.parseLong(capped.body())).isBetween(1L, 700L);
    assertThat(Long.parseLong(absent.body())).isBetween(1L, 700L);
    assertThat(Long.parseLong(smaller.body())).isBetween(1L, 300L);
  }

  @Test
  void aBudgetBelowTheMinimumIsRefused() throws Exception {
    start(DeadlineFilter.builder().minRemaining(Duration.ofMillis(50)).build());

    HttpResponse<String> tooLittle = get("49");
    HttpResponse<String> enough = get("50");

    assertThat(tooLittle.statusCode()).isEqualTo(503);
    assertThat(tooLittle.body()).contains("DEPENDENCY.timeout").contains("less than the 50 ms");
    assertThat(enough.statusCode()).isEqualTo(200);
    assertThat(handled).hasValue(1);
  }

  @Test
  void anExpiredRequestCreatesNoIdempotencyRecord() throws Exception {
    InMemoryIdempotencyStore store = new InMemoryIdempotencyStore("deadline-test");
    Idem idem = Idem.builder().name("deadline-test").store(store).build();
    IdempotencyFilter idempotency = IdempotencyFilter.builder(idem).route(IdempotentRoute.leased("POST", "/orders"))
        .scope(ScopeResolver.header("X-Tenant")).build();
    server = new DeadlineServer((request, response) -> {
      handled.incrementAndGet();
      response.setStatus(201);
      response.setContentType("application/json");
      response.getOutputStream().write("{\"id\":1}".getBytes(StandardCharsets.UTF_8));
    }, DeadlineFilter.ofDefaults(), idempotency);

    HttpResponse<String> expired = post(server.uri("/orders"), "0");
    HttpResponse<String> fresh = post(server.uri("/orders"), "5000");
    HttpResponse<String> again = post(server.uri("/orders"), "5000");

    assertThat(expired.statusCode()).isEqualTo(503);
    assertThat(fresh.statusCode()).as(fresh.body()).isEqualTo(201);
    assertThat(fresh.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
    assertThat(again.statusCode()).isEqualTo(201);
    assertThat(again.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).contains("true");
    assertThat(handled).hasValue(1);
  }

  private static HttpResponse<String> post(URI uri, String timeout) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json").header("X-Tenant", "t1")
        .header("Idempotency-Key", "order-key-1").header("Request-Timeout", timeout)
        .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":5}")).build(), HttpResponse.BodyHandlers.ofString());
  }
}
