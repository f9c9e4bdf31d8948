package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** A server's Retry-After is bounded (maxRetryAfter) and jittered; virtual time, recorded sleeps. */
class RetryAfterLimitTest {
  private final MutableClock clock = new MutableClock();
  private final RecordingSleeper sleeper = new RecordingSleeper(clock);

  /** A failure carrying a hint. */
  static final class Throttled extends IOException implements RetryAfterHint {
    private static final long serialVersionUID = 1L;
    private final Duration hint;

    Throttled(Duration hint) {
      super("throttled for " + hint);
      this.hint = hint;
    }

    @Override
    public Optional<Duration> retryAfter() {
      return Optional.of(hint);
    }
  }

  private Retry<String> retry(RetryPolicy<String> policy, long seed) {
    return Retry.of(policy).withClock(clock).withSleeper(sleeper).withRandom(new SplittableRandom(seed));
  }

  private static String throttledOnce(AtomicInteger n, Duration hint) throws Throttled {
    if (n.incrementAndGet() == 1) {
      throw new Throttled(hint);
    }
    return "ok";
  }

  @Test
  void aYearLongHintWithoutADeadlineEndsTheCallInsteadOfParkingTheThread() {
    RetryPolicy<String> policy = RetryPolicy.<String>builder().noDeadline().build();
    AtomicInteger n = new AtomicInteger();

    assertThatThrownBy(() -> retry(policy, 1).call(() -> throttledOnce(n, Duration.ofSeconds(31_536_000))))
        .isInstanceOfSatisfying(RetryAfterExceededException.class, e -> {
          assertThat(e.retryAfterHint()).isEqualTo(Duration.ofSeconds(31_536_000));
          assertThat(e.maxRetryAfter()).isEqualTo(Duration.ofSeconds(60));
          assertThat(e.attempts()).isEqualTo(1);
          assertThat(e.getCause()).isInstanceOf(Throttled.class);
        })
        .isInstanceOf(RetryException.class)
        .hasMessageContaining("longer than maxRetryAfter PT1M");
    assertThat(sleeper.delays).isEmpty();
    assertThat(n).hasValue(1);
  }

  @Test
  void defaultMaximumIsTheLargerOfSixtySecondsAndTheBackoffCapWithoutADeadlineAndNoneWithOne() {
    assertThat(RetryPolicy.<String>builder().noDeadline().build().maxRetryAfter()).contains(Duration.ofSeconds(60));
    assertThat(RetryPolicy.<String>builder().noDeadline().backoff(Duration.ofSeconds(1), Duration.ofMinutes(2))
        .build().maxRetryAfter()).contains(Duration.ofMinutes(2));
    assertThat(RetryPolicy.<String>ofDefaults().maxRetryAfter()).isEmpty();
    assertThat(RetryPolicy.<String>builder().maxRetryAfter(Duration.ofSeconds(5)).build().toBuilder().build()
        .maxRetryAfter()).contains(Duration.ofSeconds(5));
  }

  @Test
  void anExplicitMaximumAppliesEvenWithADeadline() {
    RetryPolicy<String> policy = RetryPolicy.<String>builder().deadline(Duration.ofMinutes(10))
        .maxRetryAfter(Duration.ofSeconds(5)).build();
    AtomicInteger n = new AtomicInteger();

    assertThatThrownBy(() -> retry(policy, 1).call(() -> throttledOnce(n, Duration.ofSeconds(6))))
        .isInstanceOf(RetryAfterExceededException.class);
    assertThat(sleeper.delays).isEmpty();
  }

  @Test
  void aHintAtTheMaximumIsWaitedFor() {
    RetryPolicy<String> policy = RetryPolicy.<String>builder().noDeadline().build();
    AtomicInteger n = new AtomicInteger();

    assertThat(retry(policy, 1).call(() -> throttledOnce(n, Duration.ofSeconds(60)))).isEqualTo("ok");
    assertThat(sleeper.delays).singleElement()
        .satisfies(d -> assertThat(d).isBetween(Duration.ofSeconds(60), Duration.ofSeconds(66)));
  }

  @Test
  void maxRetryAfterMustBePositive() {
    assertThatThrownBy(() -> RetryPolicy.<String>builder().maxRetryAfter(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("maxRetryAfter must be > 0, was PT0S");
    assertThatThrownBy(() -> RetryPolicy.<String>builder().maxRetryAfter(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void clientsGivenTheSameHintComeBackAtDifferentMomentsWithinATenthOfIt() {
    Duration hint = Duration.ofSeconds(10);
    Set<Duration> delays = new HashSet<>();
    for (long seed = 0; seed < 20; seed++) {
      sleeper.delays.clear();
      AtomicInteger n = new AtomicInteger();
      retry(RetryPolicy.<String>ofDefaults(), seed).call(() -> throttledOnce(n, hint));
      assertThat(sleeper.delays).singleElement()
          .satisfies(d -> assertThat(d).isBetween(hint, hint.plus(hint.dividedBy(10))));
      delays.addAll(sleeper.delays);
    }

    assertThat(delays).as("not all at the same instant").hasSizeGreaterThan(10);
  }

  @Test
  void theJitterOnAHintIsAtMostTheBackoffCap() {
    RetryPolicy<String> policy = RetryPolicy.<String>builder().noDeadline().maxRetryAfter(Duration.ofMinutes(5))
        .backoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1), Jitter.FULL)).build();
    for (long seed = 0; seed < 20; seed++) {
      sleeper.delays.clear();
      AtomicInteger n = new AtomicInteger();
      retry(policy, seed).call(() -> throttledOnce(n, Duration.ofSeconds(100)));
      assertThat(sleeper.delays).singleElement()
          .satisfies(d -> assertThat(d).isBetween(Duration.ofSeconds(100), Duration.ofSeconds(101)));
    }
  }

  @Test
  void noBackoffMeansNoJitterOnTheHint() {
    RetryPolicy<String> policy = RetryPolicy.<String>builder().backoff(Backoff.none()).build();
    AtomicInteger n = new AtomicInteger();

    retry(policy, 1).call(() -> throttledOnce(n, Duration.ofSeconds(2)));

    assertThat(sleeper.delays).containsExactly(Duration.ofSeconds(2));
  }
}
