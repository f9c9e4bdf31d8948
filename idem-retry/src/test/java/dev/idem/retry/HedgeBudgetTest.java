package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.retry.CircuitBreaker.State;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * docs/retry.md: "With a budget, each hedge needs a retry permission and is skipped when refused". Against a server
 * that is slow but answers, every call would hedge: the budget must bound the hedges. Virtual time throughout.
 */
class HedgeBudgetTest {
  private static final int CALLS = 100;

  private final MutableClock clock = new MutableClock();
  private final ManualScheduler scheduler = new ManualScheduler(clock);
  private final AtomicInteger sent = new AtomicInteger();

  private Retry<String> retry() {
    return Retry.of(RetryPolicy.<String>builder().noDeadline().build()).withClock(clock)
        .withRandom(new SplittableRandom(5)).withHedging(Duration.ofMillis(10));
  }

  /** Answers every request after 50 ms. */
  private Supplier<CompletableFuture<String>> slowButAnswering() {
    return () -> {
      sent.incrementAndGet();
      CompletableFuture<String> answer = new CompletableFuture<>();
      scheduler.schedule(() -> answer.complete("ok"), 50, TimeUnit.MILLISECONDS);
      return answer;
    };
  }

  private int hedgesOverCalls(Retry<String> retry) {
    for (int i = 0; i < CALLS; i++) {
      CompletableFuture<String> result = retry.callAsync(slowButAnswering(), scheduler);
      scheduler.advance(Duration.ofMillis(100));
      assertThat(result).isCompletedWithValue("ok");
    }
    return sent.get() - CALLS;
  }

  @Test
  void tokenBucketBoundsHedgesToWhatTheBucketAllows() {
    RetryBudget budget = RetryBudget.tokenBucket(10, 0.1);

    int hedges = hedgesOverCalls(retry().withBudget(budget));

    // each hedge takes a token; above half of the bucket (5 tokens) only what the successes give back (0.1 each)
    assertThat(hedges).isPositive().isLessThanOrEqualTo(5 + (int) Math.ceil(0.1 * CALLS) + 1);
  }

  @Test
  void ratioBudgetBoundsHedgesToItsRatio() {
    RetryBudget budget = RetryBudget.ratio(0.1, 0, Duration.ofSeconds(10), clock);

    int hedges = hedgesOverCalls(retry().withBudget(budget));

    assertThat(hedges).isPositive().isLessThanOrEqualTo((int) Math.ceil(0.1 * CALLS) + 1);
  }

  @Test
  void hedgeInHalfOpenNeedsAProbePermitOfItsOwn() {
    CircuitBreaker breaker = CircuitBreaker.builder().countWindow(1).minimumCalls(1).halfOpenProbes(1)
        .openDuration(Duration.ofSeconds(10)).clock(clock).build();
    assertThat(breaker.tryAcquirePermission()).isTrue();
    breaker.onFailure();
    clock.advance(Duration.ofSeconds(10));

    CompletableFuture<String> result = retry().withCircuitBreaker(breaker).callAsync(slowButAnswering(), scheduler);
    scheduler.advance(Duration.ofMillis(100));

    assertThat(sent).as("one probe allowed: no hedge beside it").hasValue(1);
    assertThat(result).isCompletedWithValue("ok");
    assertThat(breaker.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void winningHedgeReportsWithItsPermitAndThePrimaryGivesItsBack() {
    CircuitBreaker breaker = CircuitBreaker.builder().countWindow(1).minimumCalls(1).halfOpenProbes(2)
        .openDuration(Duration.ofSeconds(10)).clock(clock).build();
    assertThat(breaker.tryAcquirePermission()).isTrue();
    breaker.onFailure();
    clock.advance(Duration.ofSeconds(10));
    AtomicInteger n = new AtomicInteger();

    CompletableFuture<String> result = retry().withCircuitBreaker(breaker).callAsync(() -> {
      n.incrementAndGet();
      return n.get() == 1 ? new CompletableFuture<>() : CompletableFuture.completedFuture("hedge");
    }, scheduler);
    scheduler.advance(Duration.ofMillis(10));

    assertThat(result).isCompletedWithValue("hedge");
    assertThat(breaker.state()).as("one probe succeeded of two").isEqualTo(State.HALF_OPEN);
    assertThat(breaker.tryAcquirePermission()).as("the primary's probe permit came back").isTrue();
    breaker.onSuccess();
    assertThat(breaker.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void hedgeRefusedByTheBudgetGivesItsBreakerPermitBack() {
    CircuitBreaker breaker = CircuitBreaker.builder().countWindow(1).minimumCalls(1).halfOpenProbes(2)
        .openDuration(Duration.ofSeconds(10)).clock(clock).build();
    assertThat(breaker.tryAcquirePermission()).isTrue();
    breaker.onFailure();
    clock.advance(Duration.ofSeconds(10));
    RetryBudget budget = RetryBudget.tokenBucket(2, 0.1);
    budget.onFailure();

    CompletableFuture<String> result = retry().withCircuitBreaker(breaker).withBudget(budget)
        .callAsync(CompletableFuture::new, scheduler);
    scheduler.advance(Duration.ofMillis(10));
    result.cancel(true);

    assertThat(breaker.tryAcquirePermission()).isTrue();
    assertThat(breaker.tryAcquirePermission()).isTrue();
  }
}
