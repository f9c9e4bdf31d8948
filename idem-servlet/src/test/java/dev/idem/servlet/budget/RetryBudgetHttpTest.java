package dev.idem.servlet.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.MutableClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The filter in front of a servlet in embedded Jetty, over real HTTP. */
class RetryBudgetHttpTest {
  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final MutableClock clock = new MutableClock(Instant.ofEpochSecond(1_800_000_000L));

  /** The window's time: the test's clock, stepped by hand. */
  private long nanos() {
    return clock.millis() * 1_000_000L;
  }

  private HttpResponse<String> send(BudgetService service, String path, String header, String attempt)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(service.url(path))).timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.ofString("{}"));
    if (attempt != null) {
      b.header(header, attempt);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private HttpResponse<String> send(BudgetService service, String path, String attempt) throws Exception {
    return send(service, path, RetryBudgetFilter.DEFAULT_ATTEMPT_HEADER, attempt);
  }

  @Test
  void refusedRetryGetsA503ProblemWithRetryAfterBeforeAnyWork() throws Exception {
    RetryBudgetFilter budget = RetryBudgetFilter.builder().name("orders").minRequests(0).nanoTime(this::nanos).build();
    try (BudgetService service = new BudgetService(budget)) {
      for (int i = 0; i < 4; i++) {
        assertThat(send(service, "/orders", null).statusCode()).isEqualTo(200);
      }
      HttpResponse<String> admitted = send(service, "/orders", "2"); // 1 of 5 = 20 %
      int workBefore = service.reachedWork.get();

      HttpResponse<String> refused = send(service, "/orders", "3"); // 2 of 6 would be 33 %

      assertThat(admitted.statusCode()).isEqualTo(200);
      assertThat(refused.statusCode()).isEqualTo(503);
      assertThat(refused.headers().firstValue("Content-Type")).hasValueSatisfying(
          v -> assertThat(v).startsWith("application/problem+json"));
      assertThat(refused.headers().firstValue("Retry-After")).hasValue("10");
      assertThat(refused.body())
          .contains("\"code\":\"TRANSIENT.retry_budget_exhausted\"")
          .contains("\"type\":\"urn:idem:problem:TRANSIENT.retry_budget_exhausted\"")
          .contains("\"status\":503")
          .contains("\"retryable\":false")
          .contains("\"max_retry_share\":0.2");
      assertThat(service.reachedWork.get()).as("the refusal ran nothing behind the filter").isEqualTo(workBefore);
      assertThat(budget.shedRetries()).isEqualTo(1);
      assertThat(budget.admittedRetries()).isEqualTo(1);
      assertThat(budget.retryShare()).isEqualTo(0.2);
    }
  }

  @Test
  void firstAttemptsAndMalformedAttemptHeadersAreServedWhileRetriesAreShed() throws Exception {
    RetryBudgetFilter budget = RetryBudgetFilter.builder().maxRetryShare(0.0).minRequests(0).nanoTime(this::nanos)
        .build();
    try (BudgetService service = new BudgetService(budget)) {
      HttpResponse<String> retry = send(service, "/orders", "2");

      List<Integer> served = new CopyOnWriteArrayList<>();
      for (String value : new String[] {null, "1", "abc", "0", "-2", "2.5", "", "99999999999", "2, 3"}) {
        served.add(send(service, "/orders", value).statusCode());
      }

      assertThat(retry.statusCode()).isEqualTo(503);
      assertThat(served).containsOnly(200).hasSize(9);
      assertThat(budget.shedRetries()).isEqualTo(1);
      assertThat(budget.retryShare()).isZero();
    }
  }

  @Test
  void refusedRetriesWithBodiesLeaveTheConnectionUsable() throws Exception {
    RetryBudgetFilter budget = RetryBudgetFilter.builder().maxRetryShare(0.0).minRequests(0).nanoTime(this::nanos)
        .build();
    String body = "{\"note\":\"" + "x".repeat(4_000) + "\"}";
    try (BudgetService service = new BudgetService(budget)) {
      List<Integer> statuses = new CopyOnWriteArrayList<>();

      for (int i = 0; i < 50; i++) {
        for (String attempt : new String[] {"2", "1"}) {
          statuses.add(http.send(HttpRequest.newBuilder(URI.create(service.url("/orders")))
              .timeout(Duration.ofSeconds(30)).header(RetryBudgetFilter.DEFAULT_ATTEMPT_HEADER, attempt)
              .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
              HttpResponse.BodyHandlers.ofString()).statusCode());
        }
      }

      assertThat(statuses).hasSize(100);
      assertThat(statuses.stream().filter(s -> s == 503).count()).isEqualTo(50);
      assertThat(statuses.stream().filter(s -> s == 200).count()).isEqualTo(50);
    }
  }

  @Test
  void onlyConfiguredPathPrefixesAreCountedAndShed() throws Exception {
    RetryBudgetFilter budget = RetryBudgetFilter.builder().maxRetryShare(0.0).minRequests(0).nanoTime(this::nanos)
        .pathPrefixes("/checkout/").build();
    try (BudgetService service = new BudgetService(budget)) {
      HttpResponse<String> ordersRetry = send(service, "/orders", "4");
      HttpResponse<String> lookalike = send(service, "/checkoutx", "4");
      HttpResponse<String> checkoutRetry = send(service, "/checkout/42", "4");
      HttpResponse<String> checkoutRoot = send(service, "/checkout", "2");

      assertThat(ordersRetry.statusCode()).isEqualTo(200);
      assertThat(lookalike.statusCode()).as("Jetty's default answer: /checkoutx is not under /checkout")
          .isNotEqualTo(503);
      assertThat(lookalike.body()).doesNotContain("TRANSIENT.retry_budget_exhausted");
      assertThat(checkoutRetry.statusCode()).isEqualTo(503);
      assertThat(checkoutRetry.body()).contains("TRANSIENT.retry_budget_exhausted");
      assertThat(checkoutRoot.body()).contains("TRANSIENT.retry_budget_exhausted");
      assertThat(budget.shedRetries()).isEqualTo(2);
      assertThat(budget.pathPrefixes()).containsExactly("/checkout");
    }
  }

  @Test
  void listenerHearsAdmittedAndShedRetriesWithTheirAttemptNumbers() throws Exception {
    List<String> heard = new CopyOnWriteArrayList<>();
    RetryBudgetFilter budget = RetryBudgetFilter.builder().name("shop").maxRetryShare(0.5).minRequests(0)
        .nanoTime(this::nanos).attemptHeader("X-Attempt").retryAfter(Duration.ofMillis(2_500))
        .listener(new RetryBudgetListener() {
          @Override
          public void onRetryAdmitted(String name, int attempt) {
            heard.add(name + " admitted " + attempt);
          }

          @Override
          public void onRetryShed(String name, int attempt) {
            heard.add(name + " shed " + attempt);
            throw new IllegalStateException("a failing listener must not fail the request");
          }
        }).build();
    try (BudgetService service = new BudgetService(budget)) {
      send(service, "/orders", "X-Attempt", "1");
      HttpResponse<String> second = send(service, "/orders", "X-Attempt", "2");
      HttpResponse<String> third = send(service, "/orders", "X-Attempt", "3");
      HttpResponse<String> otherHeader = send(service, "/orders", "Idempotency-Attempt", "3");

      assertThat(second.statusCode()).isEqualTo(200);
      assertThat(third.statusCode()).isEqualTo(503);
      assertThat(third.headers().firstValue("Retry-After")).hasValue("3");
      assertThat(otherHeader.statusCode()).as("only the configured header counts").isEqualTo(200);
      assertThat(heard).containsExactly("shop admitted 2", "shop shed 3");
    }
  }
}
