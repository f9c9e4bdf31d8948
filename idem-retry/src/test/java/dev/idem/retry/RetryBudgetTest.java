package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RetryBudgetTest {
  private final MutableClock clock = new MutableClock();

  @Test
  void tokenBucketStartsFullAndAllowsRetriesAboveHalf() {
    RetryBudget budget = RetryBudget.tokenBucket(10, 0.1);

    assertThat(budget.remaining()).isEqualTo(10.0);
    assertThat(budget.tryAcquireRetry()).isTrue();
  }

  @Test
  void tokenBucketFailuresCostOneTokenAndRetriesStopAtHalf() {
    RetryBudget budget = RetryBudget.tokenBucket(10, 0.1);

    for (int i = 0; i < 4; i++) {
      budget.onFailure();
    }
    boolean atSix = budget.tryAcquireRetry();
    budget.onFailure();
    boolean atFive = budget.tryAcquireRetry();

    assertThat(atSix).isTrue();
    assertThat(atFive).isFalse();
    assertThat(budget.remaining()).isEqualTo(5.0);
  }

  @Test
  void tokenBucketSuccessesRefillByTheRatioUpToMax() {
    RetryBudget budget = RetryBudget.tokenBucket(10, 0.1);
    for (int i = 0; i < 5; i++) {
      budget.onFailure();
    }

    budget.onSuccess();
    boolean afterOneSuccess = budget.tryAcquireRetry();
    for (int i = 0; i < 1000; i++) {
      budget.onSuccess();
    }

    assertThat(afterOneSuccess).isTrue();
    assertThat(budget.remaining()).isEqualTo(10.0);
  }

  @Test
  void tokenBucketNeverGoesBelowZero() {
    RetryBudget budget = RetryBudget.tokenBucket(3, 1);

    for (int i = 0; i < 100; i++) {
      budget.onFailure();
    }

    assertThat(budget.remaining()).isZero();
  }

  @Test
  void tokenBucketIsConsistentUnderConcurrentUpdates() throws InterruptedException {
    RetryBudget budget = RetryBudget.tokenBucket(1_000_000, 1);
    Thread[] threads = new Thread[8];
    for (int t = 0; t < threads.length; t++) {
      threads[t] = new Thread(() -> {
        for (int i = 0; i < 10_000; i++) {
          budget.onFailure();
        }
      });
      threads[t].start();
    }
    for (Thread thread : threads) {
      thread.join();
    }

    assertThat(budget.remaining()).isEqualTo(1_000_000 - 80_000.0);
  }

  @Test
  void ratioBudgetAllowsRatioTimesRequestsPlusTheFloor() {
    RetryBudget budget = RetryBudget.ratio(0.1, 1, Duration.ofSeconds(10), clock);

    for (int i = 0; i < 100; i++) {
      budget.onRequest();
    }
    int granted = 0;
    while (budget.tryAcquireRetry()) {
      granted++;
    }

    assertThat(granted).isEqualTo(20);
    assertThat(budget.remaining()).isZero();
  }

  @Test
  void ratioBudgetWindowSlidesWithTheClock() {
    RetryBudget budget = RetryBudget.ratio(0.5, 0, Duration.ofSeconds(10), clock);
    for (int i = 0; i < 10; i++) {
      budget.onRequest();
    }
    for (int i = 0; i < 5; i++) {
      assertThat(budget.tryAcquireRetry()).isTrue();
    }
    assertThat(budget.tryAcquireRetry()).isFalse();

    clock.advance(Duration.ofSeconds(5));
    for (int i = 0; i < 4; i++) {
      budget.onRequest();
    }
    double halfwayRemaining = budget.remaining();
    clock.advance(Duration.ofSeconds(6));
    double afterFirstBatchLeft = budget.remaining();
    clock.advance(Duration.ofSeconds(10));
    double afterAllLeft = budget.remaining();

    assertThat(halfwayRemaining).isEqualTo(2.0);
    assertThat(afterFirstBatchLeft).isEqualTo(2.0);
    assertThat(afterAllLeft).isZero();
  }

  @Test
  void ratioBudgetFloorAllowsRetriesWithoutTraffic() {
    RetryBudget budget = RetryBudget.ratio(0.1, 2, Duration.ofSeconds(5), clock);

    assertThat(budget.remaining()).isEqualTo(10.0);
  }

  @Test
  void attemptsAgainstAServerFailingEveryCallStayWithinTheRatio() {
    int calls = 1000;
    double ratio = 0.1;
    int floorPerSecond = 1;
    Duration window = Duration.ofSeconds(10);
    RetryBudget budget = RetryBudget.ratio(ratio, floorPerSecond, window, clock);
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder().maxAttempts(3).backoff(Backoff.none()).build())
        .withBudget(budget).withClock(clock).withSleeper(new RecordingSleeper(clock));
    AtomicInteger attempts = new AtomicInteger();

    for (int i = 0; i < calls; i++) {
      clock.advance(Duration.ofMillis(5)); // 1000 calls over 5 s: one window holds them all
      try {
        retry.call(() -> {
          attempts.incrementAndGet();
          throw new IOException("503");
        });
      } catch (RetryException expected) {
        // exhausted or refused by the budget
      }
    }

    double floor = floorPerSecond * (window.toMillis() / 1000.0);
    assertThat(attempts.get()).isGreaterThan(calls).isLessThanOrEqualTo((int) ((1 + ratio) * calls + floor));
  }

  @Test
  void tokenBucketStopsRetriesAgainstAServerFailingEveryCall() {
    RetryBudget budget = RetryBudget.tokenBucket(10, 0.1);
    Retry<String> retry = Retry.of(RetryPolicy.<String>builder().maxAttempts(3).backoff(Backoff.none()).build())
        .withBudget(budget).withClock(clock).withSleeper(new RecordingSleeper(clock));
    AtomicInteger attempts = new AtomicInteger();

    for (int i = 0; i < 1000; i++) {
      try {
        retry.call(() -> {
          attempts.incrementAndGet();
          throw new IOException("503");
        });
      } catch (RetryException expected) {
        // exhausted or refused by the budget
      }
    }

    assertThat(attempts.get()).isLessThanOrEqualTo(1000 + 5);
  }

  @Test
  void validationNamesParameterAndValue() {
    assertThatThrownBy(() -> RetryBudget.tokenBucket(0, 0.1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxTokens").hasMessageContaining("0.0");
    assertThatThrownBy(() -> RetryBudget.tokenBucket(10, Double.NaN))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tokenRatio").hasMessageContaining("NaN");
    assertThatThrownBy(() -> RetryBudget.ratio(-0.1, 1, Duration.ofSeconds(1), clock))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ratio").hasMessageContaining("-0.1");
    assertThatThrownBy(() -> RetryBudget.ratio(0.1, -1, Duration.ofSeconds(1), clock))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("minRetriesPerSecond");
    assertThatThrownBy(() -> RetryBudget.ratio(0.1, 1, Duration.ZERO, clock))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("window").hasMessageContaining("PT0S");
  }
}
