package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.retry.CircuitBreaker.State;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Every permission the breaker grants comes back: as an outcome, or as a given-back permit. A half-open breaker must
 * never be left waiting for probes that will not report. Virtual time throughout.
 */
class BreakerPermitTest {
  private static final Duration OPEN = Duration.ofSeconds(10);

  private final MutableClock clock = new MutableClock();
  private final ManualScheduler scheduler = new ManualScheduler(clock);
  private final List<CompletableFuture<String>> attempts = new CopyOnWriteArrayList<>();

  private CircuitBreaker breaker(int probes) {
    return CircuitBreaker.builder().countWindow(2).minimumCalls(2).failureRateThreshold(50)
        .openDuration(OPEN, 2.0, Duration.ofMinutes(1)).halfOpenProbes(probes).clock(clock).build();
  }

  /** Opens the breaker with two failures, then waits out the open duration: half-open. */
  private void halfOpen(CircuitBreaker breaker) {
    open(breaker);
    clock.advance(OPEN);
    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
  }

  private static void open(CircuitBreaker breaker) {
    for (int i = 0; i < 2; i++) {
      assertThat(breaker.tryAcquirePermission()).isTrue();
      breaker.onFailure();
    }
    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  private Retry<String> retry(CircuitBreaker breaker, RetryPolicy.Builder<String> policy) {
    return Retry.of(policy.build()).withClock(clock).withRandom(new SplittableRandom(3))
        .withSleeper(new RecordingSleeper(clock)).withCircuitBreaker(breaker);
  }

  private static RetryPolicy.Builder<String> once() {
    return RetryPolicy.<String>builder().maxAttempts(1).noDeadline();
  }

  private Supplier<CompletableFuture<String>> pending() {
    return () -> {
      CompletableFuture<String> future = new CompletableFuture<>();
      attempts.add(future);
      return future;
    };
  }

  @Test
  void probesCancelledByTheCallerGiveTheirPermitBack() {
    CircuitBreaker breaker = breaker(3);
    halfOpen(breaker);
    Retry<String> retry = retry(breaker, once());

    for (int i = 0; i < 3; i++) {
      retry.callAsync(pending(), scheduler).cancel(true);
    }
    CompletableFuture<String> fourth = retry.callAsync(pending(), scheduler);

    assertThat(attempts).as("the fourth call is a probe, not refused").hasSize(4);
    assertThat(fourth).isNotDone();
    assertThat(attempts.subList(0, 3)).allMatch(CompletableFuture::isCancelled);
  }

  @Test
  void probeWhoseResultTheCallerCompletedElsewhereStillReportsItsOutcome() {
    CircuitBreaker breaker = breaker(1);
    halfOpen(breaker);

    CompletableFuture<String> result = retry(breaker, once()).callAsync(pending(), scheduler);
    // what orTimeout(2, SECONDS) does when the time is up, without waiting for it
    result.completeExceptionally(new TimeoutException("caller gave up"));
    attempts.get(0).complete("late but fine");

    assertThat(breaker.state()).as("the probe's success closes the breaker").isEqualTo(State.CLOSED);
    assertThat(breaker.tryAcquirePermission()).isTrue();
  }

  @Test
  void probeFailingAfterTheCallerCompletedTheResultReOpensTheBreaker() {
    CircuitBreaker breaker = breaker(1);
    halfOpen(breaker);

    CompletableFuture<String> result = retry(breaker, once()).callAsync(pending(), scheduler);
    result.completeExceptionally(new TimeoutException("caller gave up"));
    attempts.get(0).completeExceptionally(new IOException("connection reset"));

    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void throwingResultPredicateReportsAFailureToTheBreakerBeforePropagating() {
    CircuitBreaker breaker = breaker(1);
    halfOpen(breaker);
    Retry<String> retry = retry(breaker, once().retryOnResult(r -> {
      throw new IllegalStateException("predicate bug");
    }));

    assertThatThrownBy(() -> retry.call(() -> "ok")).isInstanceOf(IllegalStateException.class)
        .hasMessage("predicate bug");

    assertThat(breaker.state()).as("the probe reported a failure: open again, not half-open for ever")
        .isEqualTo(State.OPEN);
    clock.advance(OPEN.multipliedBy(2));
    assertThat(breaker.tryAcquirePermission()).isTrue();
  }

  @Test
  void throwingRetryIfPredicateReportsAFailureToTheBreakerBeforePropagating() {
    CircuitBreaker breaker = breaker(1);
    halfOpen(breaker);
    Retry<String> retry = retry(breaker, once().retryIf(t -> {
      throw new IllegalStateException("predicate bug");
    }));

    assertThatThrownBy(() -> retry.call(() -> {
      throw new IOException("connection reset");
    })).isInstanceOf(IllegalStateException.class);

    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void throwingPredicateFailsAnAsyncCallAndReportsAFailure() {
    CircuitBreaker breaker = breaker(1);
    halfOpen(breaker);

    CompletableFuture<String> result = retry(breaker, once().retryOnResult(r -> {
      throw new IllegalStateException("predicate bug");
    })).callAsync(pending(), scheduler);
    attempts.get(0).complete("ok");

    assertThat(result).as("not left pending for ever").isCompletedExceptionally();
    assertThat(result.handle((r, t) -> t).getNow(null)).isInstanceOf(IllegalStateException.class);
    assertThat(breaker.state()).isEqualTo(State.OPEN);
  }

  @Test
  void halfOpenWithoutAVerdictForAnOpenDurationLetsProbesThroughAgain() {
    CircuitBreaker breaker = breaker(3);
    halfOpen(breaker);
    for (int i = 0; i < 3; i++) {
      assertThat(breaker.tryAcquirePermission()).isTrue();
    }
    assertThat(breaker.tryAcquirePermission()).as("all probes out, none reported").isFalse();

    clock.advance(OPEN.minusMillis(1));
    assertThat(breaker.tryAcquirePermission()).isFalse();
    clock.advance(Duration.ofMillis(1));

    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
    assertThat(breaker.tryAcquirePermission()).as("a fresh round of probes").isTrue();
  }

  @Test
  void outcomesOfCallsAdmittedWhileClosedDoNotDecideTheHalfOpenState() {
    CircuitBreaker breaker = breaker(1);
    long staleSuccess = breaker.acquirePermit();
    long staleFailure = breaker.acquirePermit();
    halfOpen(breaker);

    breaker.onSuccess(staleSuccess);
    assertThat(breaker.state()).as("a stale success does not close it without a probe").isEqualTo(State.HALF_OPEN);
    breaker.onFailure(staleFailure);
    assertThat(breaker.state()).as("a stale failure does not re-open it").isEqualTo(State.HALF_OPEN);

    long probe = breaker.acquirePermit();
    assertThat(probe).isNotNegative();
    breaker.onSuccess(probe);
    assertThat(breaker.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void aStaleFailureOfAnAsyncCallDoesNotReOpenTheHalfOpenBreaker() {
    CircuitBreaker breaker = breaker(1);
    Retry<String> retry = retry(breaker, once());
    CompletableFuture<String> admittedWhileClosed = retry.callAsync(pending(), scheduler);
    halfOpen(breaker);

    attempts.get(0).completeExceptionally(new IOException("connection reset"));

    assertThat(admittedWhileClosed).isCompletedExceptionally();
    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
    CompletableFuture<String> probe = retry.callAsync(pending(), scheduler);
    attempts.get(1).complete("ok");
    assertThat(probe).isCompletedWithValue("ok");
    assertThat(breaker.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void aProbeGivenBackAfterItsRoundEndedDoesNotFreeAPermitOfTheNextRound() {
    CircuitBreaker breaker = breaker(1);
    halfOpen(breaker);
    long oldProbe = breaker.acquirePermit();
    clock.advance(OPEN);
    long newProbe = breaker.acquirePermit();
    assertThat(newProbe).isNotNegative();

    breaker.onIgnored(oldProbe);

    assertThat(breaker.tryAcquirePermission()).isFalse();
  }

  @Test
  void aPermitlessSuccessWithNoProbeOutstandingDoesNotCloseTheBreaker() {
    CircuitBreaker breaker = breaker(1);
    halfOpen(breaker);

    breaker.onSuccess();

    assertThat(breaker.state()).isEqualTo(State.HALF_OPEN);
    assertThat(breaker.tryAcquirePermission()).isTrue();
    breaker.onSuccess();
    assertThat(breaker.state()).isEqualTo(State.CLOSED);
  }
}
