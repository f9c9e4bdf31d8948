package dev.idem.servlet.budget;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.client.IdempotentHttpClient;
import dev.idem.client.Intent;
import dev.idem.client.IntentPendingException;
import dev.idem.client.Response;
import dev.idem.retry.RetryPolicy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The test: a client fleet hammering a failing dependency through the service. Eight client threads send
 * 400 requests in all to {@code /checkout}, whose dependency always fails with a retryable 503; each client retries
 * at once, up to four attempts, with the attempt counter in {@code Idempotency-Attempt}, and stops at a problem that
 * says {@code "retryable": false}. Once without the budget and once with the defaults (20 % over 10 s, 20 requests
 * before shedding); then once more with a fleet of {@link IdempotentHttpClient}s, whose attempt header and whose
 * obedience to {@code "retryable": false} are the real ones.
 */
class RetryBudgetFleetTest {
  private static final int CLIENTS = 8;
  private static final int REQUESTS_PER_CLIENT = 50;
  private static final int MAX_ATTEMPTS = 4;
  private static final byte[] BODY = "{\"amount\":100}".getBytes(StandardCharsets.UTF_8);

  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(10)).build();

  /** One logical request of a client, with its retries. */
  private interface Client {
    /** Sends one request and its retries; returns whether the budget refused one of them. */
    boolean request(URI uri) throws Exception;
  }

  /** What the fleet saw and what the dependency saw. */
  private record Run(int requests, int refusedByBudget, int dependencyCalls, int dependencyRetryCalls,
      Duration elapsed) {
    double dependencyRetryShare() {
      return dependencyCalls == 0 ? 0 : (double) dependencyRetryCalls / dependencyCalls;
    }

    @Override
    public String toString() {
      return String.format("%d dependency calls, %d retries (%.1f %%), %d retries refused, in %d ms",
          dependencyCalls, dependencyRetryCalls, 100 * dependencyRetryShare(), refusedByBudget, elapsed.toMillis());
    }
  }

  /** A client that sends the attempt header itself: four attempts at most, none after {@code retryable: false}. */
  private boolean handRolled(URI uri) throws Exception {
    for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      HttpResponse<String> response = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
          .header("Idempotency-Attempt", Integer.toString(attempt)).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofByteArray(BODY)).build(),
          HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
      assertThat(response.statusCode()).isEqualTo(503);
      if (response.body().contains("\"retryable\":false")) {
        assertThat(response.body()).contains("TRANSIENT.retry_budget_exhausted");
        return true;
      }
      assertThat(response.body()).contains("\"retryable\":true");
    }
    return false;
  }

  private Run hammer(RetryBudgetFilter budget, Client client) throws Exception {
    try (BudgetService service = new BudgetService(budget)) {
      URI uri = URI.create(service.url("/checkout"));
      AtomicInteger requests = new AtomicInteger();
      AtomicInteger refused = new AtomicInteger();
      CyclicBarrier start = new CyclicBarrier(CLIENTS);
      ExecutorService fleet = Executors.newFixedThreadPool(CLIENTS);
      long began = System.nanoTime();
      try {
        List<Future<?>> clients = new ArrayList<>();
        for (int c = 0; c < CLIENTS; c++) {
          clients.add(fleet.submit(() -> {
            start.await(30, TimeUnit.SECONDS);
            for (int r = 0; r < REQUESTS_PER_CLIENT; r++) {
              requests.incrementAndGet();
              if (client.request(uri)) {
                refused.incrementAndGet();
              }
            }
            return null;
          }));
        }
        for (Future<?> f : clients) {
          f.get(120, TimeUnit.SECONDS);
        }
      } finally {
        fleet.shutdownNow();
      }
      return new Run(requests.get(), refused.get(), service.dependencyCalls.get(),
          service.dependencyRetryCalls.get(), Duration.ofNanos(System.nanoTime() - began));
    }
  }

  /**
   * The bound, with its tolerance. Within one window it is exact: the last admitted retry saw every admission before
   * it and admitted itself only if retries stayed at or below the share of served requests (RetryShareWindow says
   * why concurrency cannot break this), and the retries that min-requests admits early are counted in that same
   * window. Only a run longer than the window (less its oldest bucket) could reuse the room of requests that have
   * left it; then allow a tenth of the share's calls, one bucket's worth once the run is longer than the window.
   */
  private static void assertDependencySawAtMostTheShare(RetryBudgetFilter budget, Run on) {
    double tolerance = on.elapsed().compareTo(budget.window().minus(budget.window().dividedBy(10))) < 0
        ? 0 : Math.ceil(budget.maxRetryShare() * on.dependencyCalls() / 10);
    assertThat((double) on.dependencyRetryCalls()).as("run %s", on)
        .isLessThanOrEqualTo(budget.maxRetryShare() * on.dependencyCalls() + tolerance);
    assertThat(on.dependencyCalls() - on.dependencyRetryCalls()).as("every first attempt was served")
        .isEqualTo(CLIENTS * REQUESTS_PER_CLIENT);
    assertThat(on.dependencyRetryCalls()).as("retries are admitted up to the share, not refused wholesale")
        .isGreaterThanOrEqualTo((int) (0.15 * on.dependencyCalls()));
    assertThat(on.refusedByBudget()).isPositive();
    assertThat(budget.shedRetries()).isEqualTo(on.refusedByBudget());
    assertThat(budget.admittedRetries()).isEqualTo(on.dependencyRetryCalls());
  }

  @Test
  void withTheBudgetOnTheDependencySeesAtMostTheConfiguredShareOfRetries() throws Exception {
    RetryBudgetFilter budget = RetryBudgetFilter.builder().name("fleet").build();

    Run off = hammer(null, this::handRolled);
    Run on = hammer(budget, this::handRolled);
    System.out.printf("retry budget fleet test: budget off: %s; budget on (max %.0f %%): %s%n", off,
        100 * budget.maxRetryShare(), on);

    assertThat(off.dependencyCalls()).isEqualTo(CLIENTS * REQUESTS_PER_CLIENT * MAX_ATTEMPTS);
    assertThat(off.dependencyRetryShare()).as("without the budget every request is tried four times")
        .isEqualTo(0.75);
    assertDependencySawAtMostTheShare(budget, on);
    assertThat(off.dependencyRetryShare()).isGreaterThan(3 * on.dependencyRetryShare());
  }

  @Test
  void fleetOfIdempotentHttpClientsStopsAtTheRefusalAndKeepsTheShare() throws Exception {
    RetryBudgetFilter budget = RetryBudgetFilter.builder().name("fleet-client").build();
    IdempotentHttpClient client = IdempotentHttpClient.builder().name("fleet").httpClient(http)
        .policy(RetryPolicy.builder().maxAttempts(MAX_ATTEMPTS).backoff(Duration.ofMillis(1), Duration.ofMillis(1))
            .build())
        .sleeper(delay -> {}) // retry at once: the harshest storm
        .build();
    AtomicInteger exhausted = new AtomicInteger();

    Run on = hammer(budget, uri -> {
      try {
        Response response = client.send(Intent.post(uri, BODY).withHeader("Content-Type", "application/json"));
        throw new AssertionError("the dependency always fails, yet the client got a final answer: " + response);
      } catch (IntentPendingException e) {
        // a keyed intent whose retry was shed stops retrying, but stays pending: an earlier attempt may have worked
        Response last = e.lastResponse().orElseThrow();
        if (RetryBudgetFilter.PROBLEM_CODE.equals(last.problemCode().orElse(null))) {
          assertThat(last.status()).isEqualTo(503);
          assertThat(e.attempts().size()).as("the refusal stopped the retries").isBetween(2, MAX_ATTEMPTS);
          return true;
        }
        assertThat(e.attempts()).hasSize(MAX_ATTEMPTS);
        exhausted.incrementAndGet();
        return false;
      }
    });
    System.out.printf("retry budget fleet test, IdempotentHttpClient fleet, budget on: %s; %d requests ran out of"
        + " attempts%n", on, exhausted.get());

    assertDependencySawAtMostTheShare(budget, on);
    assertThat(exhausted.get() + on.refusedByBudget()).as("every request ended: refused or out of attempts")
        .isEqualTo(on.requests());
  }
}
