package dev.idem.servlet.deadline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.client.IdempotentHttpClient;
import dev.idem.client.Intent;
import dev.idem.client.IntentPendingException;
import dev.idem.client.Response;
import dev.idem.core.Deadline;
import dev.idem.retry.RetryDeadlineExceededException;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The test: three services A → B → C, each an embedded Jetty with the {@link DeadlineFilter}, each calling the
 * next through idem-client. Budgets shrink at every hop, and work past the deadline is not started.
 */
class DeadlineChainTest {
  private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  /** Nanoseconds left of Deadline.current() when each service's handler started. */
  private final Map<String, Long> observedNanos = new ConcurrentHashMap<>();
  /** The Request-Timeout each service received. */
  private final Map<String, Long> receivedHeader = new ConcurrentHashMap<>();
  private final AtomicInteger cRan = new AtomicInteger();
  /** When set, B waits until its deadline has passed before it calls C. */
  private volatile boolean bStalls;
  /** What B's call to C ended with, when it failed. */
  private final AtomicReference<Throwable> bCallFailure = new AtomicReference<>();
  private final CountDownLatch bFinished = new CountDownLatch(1);

  private DeadlineServer a;
  private DeadlineServer b;
  private DeadlineServer c;

  @BeforeEach
  void startChain() throws Exception {
    c = new DeadlineServer((request, response) -> {
      observe("C", request);
      cRan.incrementAndGet();
      ok(response, "C done");
    }, DeadlineFilter.ofDefaults());
    IdempotentHttpClient toC = client("b-to-c");
    b = new DeadlineServer((request, response) -> {
      try {
        observe("B", request);
        if (bStalls) {
          parkUntilExpired(Deadline.current().orElseThrow());
        }
        forward(toC, c.uri("/c"), response, bCallFailure);
      } finally {
        bFinished.countDown();
      }
    }, DeadlineFilter.ofDefaults());
    IdempotentHttpClient toB = client("a-to-b");
    a = new DeadlineServer((request, response) -> {
      observe("A", request);
      forward(toB, b.uri("/b"), response, new AtomicReference<>());
    }, DeadlineFilter.ofDefaults());
  }

  @AfterEach
  void stopChain() throws Exception {
    for (DeadlineServer s : new DeadlineServer[] {a, b, c}) {
      if (s != null) {
        s.close();
      }
    }
  }

  /** idem-client with its default policy (5 attempts, 30 s deadline): every budget here is smaller. */
  private static IdempotentHttpClient client(String name) {
    return IdempotentHttpClient.builder().name(name).httpClient(HTTP).build();
  }

  private void observe(String service, HttpServletRequest request) {
    Deadline d = Deadline.current().orElseThrow(() -> new AssertionError(service + " has no current deadline"));
    observedNanos.put(service, d.remainingNanos());
    assertThat(DeadlineFilter.deadline(request)).containsSame(d);
    receivedHeader.put(service, Long.parseLong(request.getHeader("Request-Timeout")));
  }

  /** Waits for time, not for another thread: parks until the deadline has passed (bounded in count). */
  private static void parkUntilExpired(Deadline d) {
    for (int i = 0; i < 100_000 && !d.isExpired(); i++) {
      LockSupport.parkNanos(Math.max(d.remainingNanos(), 1_000L));
    }
    assertThat(d.isExpired()).isTrue();
  }

  /** Calls the next service; a call that ends without an answer becomes 504 DEPENDENCY.timeout. */
  private static void forward(IdempotentHttpClient client, URI next, HttpServletResponse response,
      AtomicReference<Throwable> failure) throws IOException {
    Response answer;
    try {
      answer = client.send(Intent.post(next, "{\"step\":1}".getBytes(StandardCharsets.UTF_8)));
    } catch (IntentPendingException e) {
      failure.set(e);
      Problem.of(504, "DEPENDENCY.timeout", "The next service gave no answer in time")
          .withDetail(e.getCause() == null ? e.getMessage() : e.getCause().getClass().getSimpleName())
          .withRetryable(true).write(response);
      return;
    }
    response.setStatus(answer.status());
    response.setContentType("text/plain");
    response.getOutputStream().write(answer.body());
  }

  private static void ok(HttpServletResponse response, String text) throws IOException {
    response.setStatus(200);
    response.setContentType("text/plain");
    response.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
  }

  private HttpResponse<String> callA(long budgetMillis) throws IOException, InterruptedException {
    return HTTP.send(HttpRequest.newBuilder(a.uri("/a")).timeout(Duration.ofSeconds(20))
        .header("Request-Timeout", Long.toString(budgetMillis)).POST(HttpRequest.BodyPublishers.ofString("{}"))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void eachLayerSeesASmallerBudgetThanTheOneBefore() throws Exception {
    HttpResponse<String> r = callA(5_000);

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("C done");
    long seenA = observedNanos.get("A");
    long seenB = observedNanos.get("B");
    long seenC = observedNanos.get("C");
    assertThat(seenA).isLessThan(Duration.ofMillis(5_000).toNanos()).isGreaterThan(0);
    assertThat(seenB).isLessThan(seenA).isGreaterThan(0);
    assertThat(seenC).isLessThan(seenB).isGreaterThan(0);
    // on the wire: the budget each hop sent never grows
    assertThat(receivedHeader.get("A")).isEqualTo(5_000);
    assertThat(receivedHeader.get("B")).isLessThanOrEqualTo(Duration.ofNanos(seenA).toMillis());
    assertThat(receivedHeader.get("C")).isLessThanOrEqualTo(Duration.ofNanos(seenB).toMillis())
        .isLessThan(receivedHeader.get("B"));
    assertThat(cRan).hasValue(1);
  }

  @Test
  void workPastTheDeadlineIsNotStarted() throws Exception {
    bStalls = true;

    HttpResponse<String> r = callA(1_500);

    assertThat(r.statusCode()).isEqualTo(504);
    assertThat(r.body()).contains("\"code\":\"DEPENDENCY.timeout\"");
    assertThat(bFinished.await(20, TimeUnit.SECONDS)).as("B finished").isTrue();
    assertThat(bCallFailure.get()).isInstanceOf(IntentPendingException.class)
        .hasCauseInstanceOf(RetryDeadlineExceededException.class)
        .hasMessageContaining("nothing was sent");
    assertThat(((IntentPendingException) bCallFailure.get()).attempts()).isEmpty();
    assertThat(observedNanos).containsKeys("A", "B").doesNotContainKey("C");
    assertThat(cRan).hasValue(0);
  }
}
