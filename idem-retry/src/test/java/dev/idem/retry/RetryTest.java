package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idem.retry.spi.RetryListener;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RetryTest {
  private final MutableClock clock = new MutableClock();
  private final RecordingSleeper sleeper = new RecordingSleeper(clock);
  private final AtomicInteger calls = new AtomicInteger();

  /** A response with a status and headers, as a client would see it. */
  record Response(int status, Map<String, String> headers) {
    static Response of(int status) {
      return new Response(status, Map.of());
    }
  }

  /** A failure that carries a server's Retry-After hint. */
  static final class ThrottledException extends IOException implements RetryAfterHint {
    private static final long serialVersionUID = 1L;
    private final Duration hint;

    ThrottledException(Duration hint) {
      super("429 Too Many Requests");
      this.hint = hint;
    }

    @Override
    public Optional<Duration> retryAfter() {
      return Optional.of(hint);
    }
  }

  private <R> Retry<R> retry(RetryPolicy<R> policy) {
    return Retry.of(policy).withClock(clock).withSleeper(sleeper).withRandom(new SplittableRandom(7));
  }

  private static RetryPolicy.Builder<String> noJitter() {
    return RetryPolicy.<String>builder()
        .backoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(10), Jitter.NONE));
  }

  private Callable<String> failing(int failures, String result) {
    return () -> {
      if (calls.incrementAndGet() <= failures) {
        throw new IOException("connection reset " + calls.get());
      }
      return result;
    };
  }

  @Test
  void firstAttemptSuccessReturnsWithoutWaiting() {
    String result = retry(RetryPolicy.<String>ofDefaults()).call(failing(0, "ok"));

    assertThat(result).isEqualTo("ok");
    assertThat(calls).hasValue(1);
    assertThat(sleeper.delays).isEmpty();
  }

  @Test
  void retriesWithTheBackoffDelaysUntilSuccess() {
    String result = retry(noJitter().build()).call(failing(2, "ok"));

    assertThat(result).isEqualTo("ok");
    assertThat(calls).hasValue(3);
    assertThat(sleeper.delays).containsExactly(Duration.ofMillis(100), Duration.ofMillis(200));
  }

  @Test
  void givesUpAfterMaxAttemptsWithAttemptsAndLastCause() {
    RetryExhaustedException e = catchThrowableOfType(
        () -> retry(noJitter().maxAttempts(3).build()).call(failing(10, "never")), RetryExhaustedException.class);

    assertThat(e.attempts()).isEqualTo(3);
    assertThat(e.getCause()).isInstanceOf(IOException.class).hasMessage("connection reset 3");
    assertThat(e).hasMessageContaining("gave up after 3 attempts");
    assertThat(sleeper.delays).hasSize(2);
  }

  @Test
  void uncheckedFailureClassifiedNotRetryableIsRethrownAsItIs() {
    IllegalArgumentException bad = new IllegalArgumentException("422 payload mismatch");

    assertThatThrownBy(() -> retry(RetryPolicy.<String>ofDefaults()).call(() -> {
      calls.incrementAndGet();
      throw bad;
    })).isSameAs(bad);
    assertThat(calls).hasValue(1);
  }

  @Test
  void checkedFailureClassifiedNotRetryableIsWrappedInRetryAborted() {
    Exception checked = new Exception("not I/O");

    RetryAbortedException e = catchThrowableOfType(
        () -> retry(RetryPolicy.<String>ofDefaults()).call(() -> {
          throw checked;
        }), RetryAbortedException.class);

    assertThat(e.getCause()).isSameAs(checked);
    assertThat(e.attempts()).isEqualTo(1);
  }

  @Test
  void retryableResultIsRetriedAndTheNextResultReturned() {
    RetryPolicy<Response> policy = RetryPolicy.<Response>builder()
        .backoff(Backoff.none())
        .retryOnResult(r -> r.status() == 503)
        .build();
    AtomicInteger n = new AtomicInteger();

    Response response = retry(policy).call(() -> Response.of(n.incrementAndGet() < 3 ? 503 : 200));

    assertThat(response.status()).isEqualTo(200);
    assertThat(n).hasValue(3);
  }

  @Test
  void exhaustedOnResultsCarriesTheLastResult() {
    RetryPolicy<Response> policy = RetryPolicy.<Response>builder()
        .maxAttempts(2).backoff(Backoff.none()).retryOnResult(r -> r.status() == 503).build();

    RetryExhaustedException e =
        catchThrowableOfType(() -> retry(policy).call(() -> Response.of(503)), RetryExhaustedException.class);

    assertThat(e.lastResult()).isEqualTo(Response.of(503));
    assertThat(e.getCause()).isNull();
  }

  @Test
  void abortOnResultReturnsTheResultWithoutRetrying() {
    RetryPolicy<Response> policy = RetryPolicy.<Response>builder()
        .retryOnResult(r -> r.status() >= 500).abortOnResult(r -> r.status() == 501).build();

    Response response = retry(policy).call(() -> {
      calls.incrementAndGet();
      return Response.of(501);
    });

    assertThat(response.status()).isEqualTo(501);
    assertThat(calls).hasValue(1);
  }

  @Test
  void deadlineEndsTheCallWhenTheNextDelayWouldPassIt() {
    RetryPolicy<String> policy = noJitter()
        .backoff(Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(10), Jitter.NONE))
        .maxAttempts(10)
        .deadline(Duration.ofMillis(2500))
        .build();

    RetryDeadlineExceededException e =
        catchThrowableOfType(() -> retry(policy).call(failing(10, "never")), RetryDeadlineExceededException.class);

    assertThat(calls).hasValue(2);
    assertThat(sleeper.delays).containsExactly(Duration.ofSeconds(1));
    assertThat(e.remaining()).isEqualTo(Duration.ofMillis(1500));
    assertThat(e.delay()).isEqualTo(Duration.ofSeconds(2));
    assertThat(e.retryAfterHint()).isNull();
    assertThat(e).hasMessageContaining("next delay PT2S lands past the deadline")
        .hasMessageContaining("remaining budget PT1.5S");
  }

  @Test
  void retryAfterHintIsAFloorOnTheDelay() {
    RetryPolicy<Response> policy = RetryPolicy.<Response>builder()
        .retryOnResult(r -> r.status() == 503)
        .retryAfter(r -> RetryAfter.parse(r.headers().get("Retry-After"), r.headers().get("Date"), clock))
        .build();
    AtomicInteger n = new AtomicInteger();

    Response response = retry(policy).call(() -> n.incrementAndGet() == 1
        ? new Response(503, Map.of("Retry-After", "3"))
        : Response.of(200));

    assertThat(response.status()).isEqualTo(200);
    // the hint plus a jitter of at most a tenth of it (RetryPolicy.Builder#retryAfter)
    assertThat(sleeper.delays).singleElement()
        .satisfies(d -> assertThat(d).isBetween(Duration.ofSeconds(3), Duration.ofMillis(3300)));
  }

  @Test
  void retryAfterHintBelowTheBackoffDelayDoesNotShortenIt() {
    RetryPolicy<String> policy = noJitter().build();
    AtomicInteger n = new AtomicInteger();

    retry(policy).call(() -> {
      if (n.incrementAndGet() == 1) {
        throw new ThrottledException(Duration.ofMillis(10));
      }
      return "ok";
    });

    assertThat(sleeper.delays).containsExactly(Duration.ofMillis(100));
  }

  @Test
  void retryAfterHintOnAFailureIsAFloorToo() {
    AtomicInteger n = new AtomicInteger();

    retry(noJitter().build()).call(() -> {
      if (n.incrementAndGet() == 1) {
        throw new ThrottledException(Duration.ofSeconds(4));
      }
      return "ok";
    });

    assertThat(sleeper.delays).singleElement()
        .satisfies(d -> assertThat(d).isBetween(Duration.ofSeconds(4), Duration.ofMillis(4400)));
  }

  @Test
  void retryAfterHintPastTheDeadlineEndsTheCallAtOnceWithAClearMessage() {
    RetryPolicy<Response> policy = RetryPolicy.<Response>builder()
        .deadline(Duration.ofSeconds(30))
        .retryOnResult(r -> r.status() == 429)
        .retryAfter(r -> RetryAfter.parse(r.headers().get("Retry-After"), r.headers().get("Date"), clock))
        .build();

    RetryDeadlineExceededException e = catchThrowableOfType(() -> retry(policy).call(() -> {
      calls.incrementAndGet();
      clock.advance(Duration.ofSeconds(5));
      return new Response(429, Map.of(
          "Date", "Thu, 01 Jan 2026 01:00:05 GMT", "Retry-After", "Thu, 01 Jan 2026 01:01:05 GMT"));
    }), RetryDeadlineExceededException.class);

    assertThat(calls).hasValue(1);
    assertThat(sleeper.delays).isEmpty();
    assertThat(e.retryAfterHint()).isEqualTo(Duration.ofMinutes(1));
    assertThat(e.remaining()).isEqualTo(Duration.ofSeconds(25));
    assertThat(e).hasMessageContaining("Retry-After hint PT1M lands past the deadline")
        .hasMessageContaining("remaining budget PT25S");
  }

  @Test
  void budgetRefusalEndsTheCall() {
    RetryBudget budget = RetryBudget.tokenBucket(2, 0.1);
    List<String> events = new CopyOnWriteArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override
      public void onBudgetRefused(String name, int attempt) {
        events.add(name + " refused after " + attempt);
      }
    };

    RetryBudgetExhaustedException e = catchThrowableOfType(
        () -> retry(noJitter().build()).withName("payments").withBudget(budget).withListener(listener)
            .call(failing(10, "never")),
        RetryBudgetExhaustedException.class);

    assertThat(calls).hasValue(1);
    assertThat(events).containsExactly("payments refused after 1");
    assertThat(e).hasMessageStartingWith("payments: retry budget refused");
  }

  @Test
  void openCircuitRefusesWithoutCalling() {
    CircuitBreaker breaker = CircuitBreaker.builder().countWindow(2).minimumCalls(2)
        .openDuration(Duration.ofMinutes(1)).clock(clock).build();
    breaker.onFailure();
    breaker.onFailure();

    CircuitOpenException e =
        catchThrowableOfType(() -> retry(noJitter().build()).withCircuitBreaker(breaker).call(failing(0, "ok")),
            CircuitOpenException.class);

    assertThat(calls).hasValue(0);
    assertThat(e.circuitBreaker()).isSameAs(breaker);
  }

  @Test
  void retriesFeedTheCircuitBreakerUntilItOpens() {
    CircuitBreaker breaker = CircuitBreaker.builder().countWindow(3).minimumCalls(3)
        .openDuration(Duration.ofMinutes(1)).clock(clock).build();

    CircuitOpenException e = catchThrowableOfType(
        () -> retry(noJitter().maxAttempts(10).build()).withCircuitBreaker(breaker).call(failing(10, "never")),
        CircuitOpenException.class);

    assertThat(calls).hasValue(3);
    assertThat(e.attempts()).isEqualTo(3);
    assertThat(e.getCause()).isInstanceOf(IOException.class);
  }

  @Test
  void routedPolicyDecidesAttemptsAndBackoffForItsFailureType() {
    RetryPolicy<String> policy = noJitter()
        .maxAttempts(5)
        .policyFor(TimeoutException.class, RetryPolicy.builder().maxAttempts(2)
            .backoff(Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(1), Jitter.NONE)).build())
        .build();

    RetryExhaustedException e = catchThrowableOfType(() -> retry(policy).call(() -> {
      calls.incrementAndGet();
      throw new TimeoutException("slow");
    }), RetryExhaustedException.class);

    assertThat(e.attempts()).isEqualTo(2);
    assertThat(sleeper.delays).containsExactly(Duration.ofSeconds(1));
  }

  @Test
  void listenerHearsEveryEventInOrder() {
    List<String> events = new CopyOnWriteArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override
      public void onAttempt(String name, int attempt) {
        events.add("attempt " + attempt);
      }

      @Override
      public void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause) {
        events.add("retry after " + attempt + " in " + delay + " for " + cause.getMessage());
      }

      @Override
      public void onSuccess(String name, int attempts, Object result) {
        events.add("success " + attempts + " " + result);
      }
    };

    retry(noJitter().build()).withListener(listener).call(failing(1, "ok"));

    assertThat(events).containsExactly(
        "attempt 1", "retry after 1 in PT0.1S for connection reset 1", "attempt 2", "success 2 ok");
  }

  @Test
  void listenerOfARetryCausedByAResultIsToldThatResult() {
    RetryPolicy<Response> policy = RetryPolicy.<Response>builder()
        .backoff(Backoff.none()).retryOnResult(r -> r.status() == 503).build();
    List<String> events = new CopyOnWriteArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override
      public void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause, Object result) {
        events.add("retry after " + attempt + ": cause " + cause + ", result " + result);
      }
    };
    AtomicInteger n = new AtomicInteger();

    retry(policy).withListener(listener).call(() -> n.incrementAndGet() == 1 ? Response.of(503) : Response.of(200));
    retry(RetryPolicy.<String>builder().backoff(Backoff.none()).build()).withListener(listener)
        .call(failing(1, "ok"));

    assertThat(events).containsExactly(
        "retry after 1: cause null, result " + Response.of(503),
        "retry after 1: cause java.io.IOException: connection reset 1, result null");
  }

  @Test
  void listenerWrittenForTheFourArgumentEventStillHearsEveryRetry() {
    List<String> events = new CopyOnWriteArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override
      public void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause) {
        events.add("retry after " + attempt + " for " + cause);
      }
    };
    RetryPolicy<Response> policy = RetryPolicy.<Response>builder()
        .backoff(Backoff.none()).retryOnResult(r -> r.status() == 503).build();
    AtomicInteger n = new AtomicInteger();

    retry(policy).withListener(listener).call(() -> n.incrementAndGet() == 1 ? Response.of(503) : Response.of(200));

    assertThat(events).containsExactly("retry after 1 for null");
  }

  @Test
  void interruptWhileWaitingAbortsAndKeepsTheInterruptFlag() {
    Retry<String> retry = Retry.of(noJitter().build()).withClock(clock).withSleeper(d -> {
      throw new InterruptedException();
    });

    try {
      assertThatThrownBy(() -> retry.call(failing(1, "ok")))
          .isInstanceOf(RetryAbortedException.class).hasMessageContaining("interrupted");
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
    } finally {
      Thread.interrupted();
    }
  }

  @Test
  void successPathAllocatesNothing() {
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    CircuitBreaker breaker = CircuitBreaker.builder().clock(Clock.systemUTC()).build();
    Retry<String> tokenBucket = Retry.of(RetryPolicy.<String>ofDefaults())
        .withBudget(RetryBudget.tokenBucket(10, 0.1)).withCircuitBreaker(breaker);
    Retry<String> ratio = Retry.of(RetryPolicy.<String>ofDefaults())
        .withBudget(RetryBudget.ratio(0.1, 10, Duration.ofSeconds(10), Clock.systemUTC()));
    Callable<String> operation = () -> "ok";
    int n = 200_000;
    for (int i = 0; i < n; i++) {
      tokenBucket.call(operation);
      ratio.call(operation);
    }
    long thread = Thread.currentThread().getId();

    long before = threads.getThreadAllocatedBytes(thread);
    for (int i = 0; i < n; i++) {
      tokenBucket.call(operation);
      ratio.call(operation);
    }
    long allocated = threads.getThreadAllocatedBytes(thread) - before;

    assertThat(allocated).as("bytes allocated by %d successful calls", 2 * n).isLessThan(n / 10);
  }

  @Test
  void aZeroDelayCallsNoSleeperAndAllocatesNothingBeyondTheFailure() {
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder().maxAttempts(2).backoff(Backoff.none()).build())
        .withSleeper(delay -> {
          throw new AssertionError("a zero delay must not wait, asked for " + delay);
        });
    IOException failure = new IOException("once");
    boolean[] failed = new boolean[1];
    Callable<String> failOnceThenSucceed = () -> {
      failed[0] = !failed[0];
      if (failed[0]) {
        throw failure;
      }
      return "ok";
    };
    int n = 200_000;
    for (int i = 0; i < n; i++) {
      assertThat(retry.call(failOnceThenSucceed)).isEqualTo("ok");
    }
    long thread = Thread.currentThread().getId();

    long before = threads.getThreadAllocatedBytes(thread);
    for (int i = 0; i < n; i++) {
      retry.call(failOnceThenSucceed);
    }
    long allocated = threads.getThreadAllocatedBytes(thread) - before;

    assertThat(allocated).as("bytes allocated by %d calls of one failure and one success", n).isLessThan(n / 10);
  }

  @Test
  void anInterruptedCallerStopsBeforeTheNextAttemptEvenWithoutADelay() {
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder().maxAttempts(3).backoff(Backoff.none()).build());
    int[] attempts = new int[1];
    try {
      assertThatThrownBy(() -> retry.call(() -> {
        attempts[0]++;
        Thread.currentThread().interrupt();
        throw new IOException("down");
      })).isInstanceOf(RetryAbortedException.class).hasMessageContaining("interrupted while waiting");
      assertThat(attempts[0]).isEqualTo(1);
      assertThat(Thread.currentThread().isInterrupted()).as("the interrupt is kept for the caller").isTrue();
    } finally {
      Thread.interrupted();
    }
  }
}
