package dev.idem.retry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class BackoffTest {
  private static final long MS = 1_000_000L;
  private static final Duration BASE = Duration.ofMillis(5);
  private static final Duration CAP = Duration.ofMillis(2000);

  @Test
  void noJitterDoublesFromBaseUpToTheCap() {
    Backoff backoff = Backoff.exponential(BASE, CAP, Jitter.NONE);
    RandomGenerator random = new SplittableRandom(1);

    long[] delays = new long[11];
    for (int retry = 1; retry <= 11; retry++) {
      delays[retry - 1] = backoff.delayNanos(retry, 0, random);
    }

    assertThat(delays).containsExactly(
        5 * MS, 10 * MS, 20 * MS, 40 * MS, 80 * MS, 160 * MS, 320 * MS, 640 * MS, 1280 * MS, 2000 * MS, 2000 * MS);
  }

  @ParameterizedTest
  @EnumSource(Jitter.class)
  void retry200AndIntMaxGiveTheCapBoundsWithoutOverflow(Jitter jitter) {
    Backoff backoff = Backoff.exponential(BASE, CAP, jitter);
    RandomGenerator random = new SplittableRandom(2);

    for (int retry : new int[] {62, 63, 64, 200, Integer.MAX_VALUE}) {
      long delay = backoff.delayNanos(retry, 2000 * MS, random);

      assertThat(delay).as("%s retry %d", jitter, retry).isBetween(0L, 2000 * MS);
    }
    assertThat(Backoff.exponential(BASE, CAP, Jitter.NONE).delayNanos(200, 0, random)).isEqualTo(2000 * MS);
  }

  @Test
  void hugeCapSaturatesInsteadOfOverflowing() {
    Backoff backoff = Backoff.exponential(Duration.ofSeconds(1), Duration.ofDays(365 * 200), Jitter.NONE);

    long delay = backoff.delayNanos(200, 0, new SplittableRandom(3));

    assertThat(delay).isEqualTo(Duration.ofDays(365 * 200).toNanos());
    assertThat(Backoff.exponential(Duration.ofSeconds(1), Duration.ofDays(365 * 200), Jitter.DECORRELATED)
        .delayNanos(5, Long.MAX_VALUE / 2, new SplittableRandom(3))).isPositive();
  }

  @Test
  void fullJitterStaysWithinZeroAndTheExponentialDelayAndUsesTheRange() {
    Backoff backoff = Backoff.exponential(BASE, CAP, Jitter.FULL);
    RandomGenerator random = new SplittableRandom(42);

    for (int retry = 1; retry <= 12; retry++) {
      long exponential = Math.min(2000 * MS, (5 * MS) << (retry - 1));
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      for (int i = 0; i < 10_000; i++) {
        long d = backoff.delayNanos(retry, 0, random);
        min = Math.min(min, d);
        max = Math.max(max, d);
      }

      assertThat(min).as("retry %d min", retry).isBetween(0L, exponential / 50);
      assertThat(max).as("retry %d max", retry).isBetween(exponential - exponential / 50, exponential);
    }
  }

  @Test
  void equalJitterStaysWithinHalfAndAllOfTheExponentialDelay() {
    Backoff backoff = Backoff.exponential(BASE, CAP, Jitter.EQUAL);
    RandomGenerator random = new SplittableRandom(43);

    for (int retry = 1; retry <= 12; retry++) {
      long exponential = Math.min(2000 * MS, (5 * MS) << (retry - 1));
      long min = Long.MAX_VALUE;
      long max = Long.MIN_VALUE;
      for (int i = 0; i < 10_000; i++) {
        long d = backoff.delayNanos(retry, 0, random);
        min = Math.min(min, d);
        max = Math.max(max, d);
      }

      assertThat(min).as("retry %d min", retry).isBetween(exponential / 2, exponential / 2 + exponential / 50);
      assertThat(max).as("retry %d max", retry).isBetween(exponential - exponential / 50, exponential);
    }
  }

  @Test
  void decorrelatedJitterStaysBetweenBaseAndThreeTimesThePreviousDelayCapped() {
    Backoff backoff = Backoff.exponential(BASE, CAP, Jitter.DECORRELATED);
    RandomGenerator random = new SplittableRandom(44);

    for (int i = 0; i < 10_000; i++) {
      long first = backoff.delayNanos(1, 0, random);
      assertThat(first).isBetween(5 * MS, 15 * MS);
      long previous = first;
      for (int retry = 2; retry <= 15; retry++) {
        long d = backoff.delayNanos(retry, previous, random);

        assertThat(d).isBetween(5 * MS, Math.min(2000 * MS, 3 * previous));
        previous = d;
      }
    }
  }

  @Test
  void decorrelatedReachesTheCapAfterLongEnough() {
    Backoff backoff = Backoff.exponential(BASE, CAP, Jitter.DECORRELATED);
    RandomGenerator random = new SplittableRandom(45);

    long max = 0;
    for (int i = 0; i < 1_000; i++) {
      max = Math.max(max, backoff.delayNanos(10, 1900 * MS, random));
    }

    assertThat(max).isEqualTo(2000 * MS);
  }

  @Test
  void withoutThePreviousDelayDecorrelatedJitterStillGrowsWithTheRetries() {
    // a caller that keeps no previous delay (the outbox relay) gets the exponential delay of the retry before as it
    Backoff backoff = Backoff.exponential(BASE, CAP, Jitter.DECORRELATED);
    RandomGenerator random = new SplittableRandom(46);

    for (int retry = 1; retry <= 12; retry++) {
      long previous = retry == 1 ? 0 : Math.min(2000 * MS, 5 * MS << (retry - 2));
      long max = 0;
      for (int i = 0; i < 2_000; i++) {
        long d = backoff.delayNanos(retry, random);
        assertThat(d).isBetween(5 * MS, Math.min(2000 * MS, Math.max(15 * MS, 3 * previous)));
        max = Math.max(max, d);
      }
      assertThat(max).as("retry " + retry).isGreaterThan(Math.min(1900 * MS, Math.max(10 * MS, 2 * previous)));
    }
    for (Jitter other : new Jitter[] {Jitter.NONE, Jitter.FULL, Jitter.EQUAL}) {
      Backoff b = Backoff.exponential(BASE, CAP, other);
      assertThat(b.delayNanos(4, new SplittableRandom(7))).isEqualTo(b.delayNanos(4, 0, new SplittableRandom(7)));
    }
  }

  @Test
  void noneIsAlwaysZero() {
    Backoff none = Backoff.none();

    assertThat(none.delayNanos(1, 0, new SplittableRandom(1))).isZero();
    assertThat(none.delayNanos(200, 5 * MS, new SplittableRandom(1))).isZero();
    assertThat(none.base()).isEqualTo(Duration.ZERO);
    assertThat(none.jitter()).isEqualTo(Jitter.NONE);
  }

  @Test
  void sameSeedSameDelays() {
    Backoff backoff = Backoff.exponential(BASE, CAP, Jitter.FULL);

    long a = backoff.delayNanos(7, 0, new SplittableRandom(9));
    long b = backoff.delayNanos(7, 0, new SplittableRandom(9));

    assertThat(a).isEqualTo(b);
  }

  @Test
  void validationNamesTheParameterAndValue() {
    assertThatThrownBy(() -> Backoff.exponential(Duration.ZERO, CAP, Jitter.FULL))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("base").hasMessageContaining("PT0S");
    assertThatThrownBy(() -> Backoff.exponential(BASE, Duration.ofMillis(1), Jitter.FULL))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cap").hasMessageContaining("PT0.001S");
    assertThatThrownBy(() -> Backoff.exponential(BASE, Duration.ofSeconds(Long.MAX_VALUE), Jitter.FULL))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cap");
    assertThatThrownBy(() -> Backoff.exponential(BASE, CAP, Jitter.FULL).delayNanos(0, 0, new SplittableRandom()))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retry must be >= 1, was 0");
  }
}
