package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** callAsync on a scheduler that refuses work: the call fails, it never throws after sending. */
class RetryAsyncSchedulingTest {
  private final ScheduledThreadPoolExecutor shutDown = new ScheduledThreadPoolExecutor(1);
  private final AtomicInteger sent = new AtomicInteger();
  private final MutableClock clock = new MutableClock();

  RetryAsyncSchedulingTest() {
    shutDown.shutdown();
  }

  @AfterEach
  void stop() {
    shutDown.shutdownNow();
  }

  private CompletableFuture<String> neverAnswers() {
    sent.incrementAndGet();
    return new CompletableFuture<>();
  }

  private void assertFailsWithRejectionAndSentAtMostOnce(Retry<String> retry) {
    CompletableFuture<String>[] result = new CompletableFuture[1];

    assertThatCode(() -> result[0] = retry.callAsync(this::neverAnswers, shutDown)).doesNotThrowAnyException();

    assertThat(result[0]).isCompletedExceptionally();
    assertThat(result[0].handle((r, t) -> t).getNow(null)).isInstanceOf(RejectedExecutionException.class);
    assertThat(sent.get()).isLessThanOrEqualTo(1);
  }

  @Test
  void attemptTimeoutThatCannotBeScheduledFailsTheCallInsteadOfThrowing() {
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder().attemptTimeout(Duration.ofSeconds(1)).build())
        .withClock(clock);

    assertFailsWithRejectionAndSentAtMostOnce(retry);
  }

  @Test
  void deadlineTimerThatCannotBeScheduledFailsTheCallInsteadOfThrowing() {
    assertFailsWithRejectionAndSentAtMostOnce(Retry.of(RetryPolicy.<String>ofDefaults()).withClock(clock));
  }

  @Test
  void hedgeTimerThatCannotBeScheduledFailsTheCallInsteadOfThrowing() {
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder().noDeadline().build()).withClock(clock)
        .withHedging(Duration.ofMillis(10));

    assertFailsWithRejectionAndSentAtMostOnce(retry);
  }

  @Test
  void rejectedAttemptGivesItsBreakerPermitBack() {
    CircuitBreaker breaker = CircuitBreaker.builder().countWindow(1).minimumCalls(1).halfOpenProbes(1)
        .openDuration(Duration.ofSeconds(10)).clock(clock).build();
    breaker.tryAcquirePermission();
    breaker.onFailure();
    clock.advance(Duration.ofSeconds(10));

    assertFailsWithRejectionAndSentAtMostOnce(Retry.of(RetryPolicy.<String>ofDefaults()).withClock(clock)
        .withCircuitBreaker(breaker));

    assertThat(breaker.tryAcquirePermission()).as("the probe was never sent: its permit is back").isTrue();
  }
}
