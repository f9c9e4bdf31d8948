package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.retry.spi.RetryListener;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** Async execution on a scheduler in virtual time: nothing waits in real time. */
class RetryAsyncTest {
  private final MutableClock clock = new MutableClock();
  private final ManualScheduler scheduler = new ManualScheduler(clock);
  private final List<CompletableFuture<String>> attempts = new CopyOnWriteArrayList<>();
  private final List<Long> attemptMillis = new CopyOnWriteArrayList<>();
  private final long start = clock.millis();

  private Retry<String> retry(RetryPolicy<String> policy) {
    return Retry.of(policy).withClock(clock).withRandom(new SplittableRandom(7));
  }

  private static RetryPolicy.Builder<String> noJitter() {
    return RetryPolicy.<String>builder()
        .backoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(10), Jitter.NONE));
  }

  /** Each attempt returns a future the test completes (or never completes). */
  private Supplier<CompletableFuture<String>> pending() {
    return () -> {
      CompletableFuture<String> future = new CompletableFuture<>();
      attempts.add(future);
      attemptMillis.add(clock.millis() - start);
      return future;
    };
  }

  private Supplier<CompletableFuture<String>> failing(int failures, String result) {
    AtomicInteger n = new AtomicInteger();
    return () -> {
      attemptMillis.add(clock.millis() - start);
      return n.incrementAndGet() <= failures
          ? CompletableFuture.failedFuture(new IOException("connection reset " + n.get()))
          : CompletableFuture.completedFuture(result);
    };
  }

  @Test
  void firstAttemptSuccessCompletesAtOnce() {
    CompletableFuture<String> result = retry(RetryPolicy.ofDefaults()).callAsync(failing(0, "ok"), scheduler);

    assertThat(result).isCompletedWithValue("ok");
    assertThat(scheduler.pending()).as("deadline timer cancelled").isZero();
  }

  @Test
  void retriesAreScheduledAfterTheBackoffDelays() {
    CompletableFuture<String> result = retry(noJitter().build()).callAsync(failing(2, "ok"), scheduler);

    assertThat(result).isNotDone();
    scheduler.advance(Duration.ofMillis(99));
    assertThat(result).isNotDone();
    scheduler.advance(Duration.ofMillis(1 + 200));

    assertThat(result).isCompletedWithValue("ok");
    assertThat(attemptMillis).containsExactly(0L, 100L, 300L);
  }

  @Test
  void exhaustedCompletesExceptionallyWithAttemptsAndLastCause() {
    CompletableFuture<String> result =
        retry(noJitter().maxAttempts(3).build()).callAsync(failing(10, "never"), scheduler);

    scheduler.advance(Duration.ofSeconds(1));

    assertThat(result).isCompletedExceptionally();
    assertThat(result.handle((r, t) -> t).join())
        .isInstanceOfSatisfying(RetryExhaustedException.class, e -> assertThat(e.attempts()).isEqualTo(3))
        .hasCauseInstanceOf(IOException.class);
  }

  @Test
  void checkedFailureClassifiedNotRetryableIsPassedOnAsItIs() {
    Exception checked = new Exception("not I/O");

    CompletableFuture<String> result =
        retry(noJitter().build()).callAsync(() -> CompletableFuture.failedFuture(checked), scheduler);

    assertThat(result.handle((r, t) -> t).join()).isSameAs(checked);
  }

  @Test
  void attemptTimeoutCancelsTheAttemptAndEscalates() {
    RetryPolicy<String> policy = noJitter()
        .backoff(Backoff.none())
        .maxAttempts(3)
        .attemptTimeout(Duration.ofSeconds(1))
        .attemptTimeoutEscalation(2.0, Duration.ofMillis(3500))
        .build();

    CompletableFuture<String> result = retry(policy).callAsync(pending(), scheduler);
    scheduler.advance(Duration.ofSeconds(10));

    assertThat(attemptMillis).containsExactly(0L, 1000L, 3000L);
    assertThat(attempts).allSatisfy(a -> assertThat(a).isCancelled());
    assertThat(result.handle((r, t) -> t).join())
        .isInstanceOf(RetryExhaustedException.class)
        .cause().isInstanceOf(TimeoutException.class).hasMessageContaining("attempt 3 timed out after PT3.5S");
    assertThat(clock.millis() - start).isEqualTo(10_000L);
  }

  @Test
  void timedOutAttemptThatCompletesLateIsIgnored() {
    RetryPolicy<String> policy = noJitter().backoff(Backoff.none()).attemptTimeout(Duration.ofSeconds(1)).build();

    CompletableFuture<String> result = retry(policy).callAsync(pending(), scheduler);
    scheduler.advance(Duration.ofSeconds(1));
    attempts.get(0).complete("late");
    attempts.get(1).complete("second");

    assertThat(result).isCompletedWithValue("second");
  }

  @Test
  void deadlineEndsAnAttemptThatNeverCompletes() {
    RetryPolicy<String> policy = noJitter().deadline(Duration.ofSeconds(5)).build();

    CompletableFuture<String> result = retry(policy).callAsync(pending(), scheduler);
    scheduler.advance(Duration.ofSeconds(6));

    assertThat(attempts).hasSize(1);
    assertThat(attempts.get(0)).isCancelled();
    assertThat(result.handle((r, t) -> t).join())
        .isInstanceOfSatisfying(RetryDeadlineExceededException.class,
            e -> assertThat(e.remaining()).isEqualTo(Duration.ZERO))
        .hasMessageContaining("the deadline has passed");
  }

  @Test
  void hedgeStartsAfterTheDelayAndTheFirstCompletionWinsTheOtherCancelled() {
    RetryBudget budget = RetryBudget.ratio(0.1, 1, Duration.ofSeconds(10), clock);
    double before = budget.remaining();
    List<String> events = new CopyOnWriteArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override
      public void onHedge(String name, int attempt) {
        events.add("hedge " + attempt);
      }
    };

    CompletableFuture<String> result = retry(noJitter().build()).withBudget(budget).withListener(listener)
        .withHedging(Duration.ofMillis(50)).callAsync(pending(), scheduler);
    scheduler.advance(Duration.ofMillis(49));
    int beforeHedgeDelay = attempts.size();
    scheduler.advance(Duration.ofMillis(1));
    attempts.get(1).complete("hedge");

    assertThat(beforeHedgeDelay).isEqualTo(1);
    assertThat(attemptMillis).containsExactly(0L, 50L);
    assertThat(result).isCompletedWithValue("hedge");
    assertThat(attempts.get(0)).isCancelled();
    assertThat(events).containsExactly("hedge 1");
    assertThat(budget.remaining()).as("the hedge took a retry permission").isEqualTo(before - 1);
  }

  @Test
  void listenerOfAnAsyncRetryCausedByAResultIsToldThatResult() {
    List<String> events = new CopyOnWriteArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override
      public void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause, Object result) {
        events.add("retry after " + attempt + " in " + delay.toMillis() + " ms: cause " + cause + ", result "
            + result);
      }
    };
    RetryPolicy<String> policy = noJitter().retryOnResult("busy"::equals).build();

    CompletableFuture<String> result = retry(policy).withListener(listener).callAsync(pending(), scheduler);
    attempts.get(0).complete("busy");
    scheduler.advance(Duration.ofMillis(100));
    attempts.get(1).complete("ok");

    assertThat(result).isCompletedWithValue("ok");
    assertThat(events).containsExactly("retry after 1 in 100 ms: cause null, result busy");
  }

  @Test
  void primaryWinningCancelsTheHedge() {
    CompletableFuture<String> result =
        retry(noJitter().build()).withHedging(Duration.ofMillis(50)).callAsync(pending(), scheduler);
    scheduler.advance(Duration.ofMillis(60));

    attempts.get(0).complete("primary");

    assertThat(result).isCompletedWithValue("primary");
    assertThat(attempts.get(1)).isCancelled();
  }

  @Test
  void fastAttemptNeedsNoHedge() {
    CompletableFuture<String> result =
        retry(noJitter().build()).withHedging(Duration.ofMillis(50)).callAsync(pending(), scheduler);
    scheduler.advance(Duration.ofMillis(10));
    attempts.get(0).complete("fast");
    scheduler.advance(Duration.ofSeconds(1));

    assertThat(result).isCompletedWithValue("fast");
    assertThat(attempts).hasSize(1);
  }

  @Test
  void failedCopyWaitsForTheOther() {
    CompletableFuture<String> result =
        retry(noJitter().build()).withHedging(Duration.ofMillis(50)).callAsync(pending(), scheduler);
    scheduler.advance(Duration.ofMillis(50));

    attempts.get(0).completeExceptionally(new IOException("reset"));
    boolean doneAfterOneFailure = result.isDone();
    attempts.get(1).complete("hedge");

    assertThat(doneAfterOneFailure).isFalse();
    assertThat(result).isCompletedWithValue("hedge");
  }

  @Test
  void hedgeRefusedByTheBudgetIsNotSent() {
    RetryBudget budget = RetryBudget.tokenBucket(2, 0.1);
    budget.onFailure();
    List<String> events = new CopyOnWriteArrayList<>();
    RetryListener listener = new RetryListener() {
      @Override
      public void onBudgetRefused(String name, int attempt) {
        events.add("refused " + attempt);
      }
    };

    CompletableFuture<String> result = retry(noJitter().build()).withBudget(budget).withListener(listener)
        .withHedging(Duration.ofMillis(50)).callAsync(pending(), scheduler);
    scheduler.advance(Duration.ofMillis(100));
    attempts.get(0).complete("primary");

    assertThat(attempts).hasSize(1);
    assertThat(events).containsExactly("refused 1");
    assertThat(result).isCompletedWithValue("primary");
  }

  @Test
  void openCircuitCompletesExceptionallyWithoutCalling() {
    CircuitBreaker breaker = CircuitBreaker.builder().countWindow(1).minimumCalls(1).clock(clock).build();
    breaker.onFailure();

    CompletableFuture<String> result =
        retry(noJitter().build()).withCircuitBreaker(breaker).callAsync(pending(), scheduler);

    assertThat(attempts).isEmpty();
    assertThat(result.handle((r, t) -> t).join()).isInstanceOf(CircuitOpenException.class);
  }

  @Test
  void supplierThrowingCountsAsAFailedAttempt() {
    AtomicInteger n = new AtomicInteger();

    CompletableFuture<String> result = retry(noJitter().backoff(Backoff.none()).build()).callAsync(() -> {
      if (n.incrementAndGet() == 1) {
        throw new java.io.UncheckedIOException(new IOException("no route"));
      }
      return CompletableFuture.completedFuture("ok");
    }, scheduler);
    scheduler.runDue();

    assertThat(result).isCompletedWithValue("ok");
  }

  @Test
  void cancellingTheResultCancelsTheAttemptInFlightAndStopsRetrying() {
    RetryPolicy<String> policy = noJitter().backoff(Backoff.none()).attemptTimeout(Duration.ofSeconds(1)).build();

    CompletableFuture<String> result = retry(policy).callAsync(pending(), scheduler);
    result.cancel(true);
    scheduler.advance(Duration.ofSeconds(10));

    assertThat(attempts).hasSize(1);
    assertThat(attempts.get(0)).isCancelled();
  }

  @Test
  void retryAfterHintPastTheDeadlineEndsAnAsyncCallAtOnce() {
    RetryPolicy<String> policy = noJitter()
        .deadline(Duration.ofSeconds(10))
        .retryOnResult(r -> r.startsWith("429"))
        .retryAfter(r -> RetryAfter.parse(r.substring(4), clock))
        .build();

    CompletableFuture<String> result =
        retry(policy).callAsync(() -> CompletableFuture.completedFuture("429 60"), scheduler);

    assertThat(result.handle((r, t) -> t).join())
        .isInstanceOfSatisfying(RetryDeadlineExceededException.class,
            e -> assertThat(e.retryAfterHint()).isEqualTo(Duration.ofSeconds(60)))
        .hasMessageContaining("Retry-After hint PT1M lands past the deadline");
  }
}
