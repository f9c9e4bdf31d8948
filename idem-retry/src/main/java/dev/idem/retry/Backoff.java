package dev.idem.retry;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Delays of successive retries: capped exponential growth randomised per {@link Jitter}. Immutable and thread-safe;
 * the caller supplies the random source, so a delay is a pure function of its arguments and the draw.
 *
 * <p>Implementation note: all arithmetic is on {@code long} nanoseconds and saturates, so any retry number (even
 * 200 or {@link Integer#MAX_VALUE}) gives {@code cap} rather than an overflow. No method allocates.
 */
public final class Backoff {
  private static final Backoff NONE = new Backoff(Duration.ZERO, Duration.ZERO, Jitter.NONE, 0L, 0L);

  private final Duration base;
  private final Duration cap;
  private final Jitter jitter;
  private final long baseNanos;
  private final long capNanos;

  private Backoff(Duration base, Duration cap, Jitter jitter, long baseNanos, long capNanos) {
    this.base = base;
    this.cap = cap;
    this.jitter = jitter;
    this.baseNanos = baseNanos;
    this.capNanos = capNanos;
  }

  /**
   * Capped exponential: {@code base * 2^(retry-1)}, at most {@code cap}, randomised per {@code jitter}.
   *
   * @throws IllegalArgumentException unless {@code base > 0} and {@code cap >= base} (and cap fits in a long of
   *     nanoseconds, about 292 years)
   */
  public static Backoff exponential(Duration base, Duration cap, Jitter jitter) {
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(cap, "cap");
    Objects.requireNonNull(jitter, "jitter");
    if (base.isNegative() || base.isZero()) {
      throw new IllegalArgumentException("backoff base must be > 0, was " + base);
    }
    if (cap.compareTo(base) < 0) {
      throw new IllegalArgumentException("backoff cap must be >= base (" + base + "), was " + cap);
    }
    long capNanos;
    try {
      capNanos = cap.toNanos();
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException("backoff cap must fit in a long of nanoseconds (about 292 years), was " + cap);
    }
    return new Backoff(base, cap, jitter, base.toNanos(), capNanos);
  }

  /** No delay at all: {@link #delayNanos} is always 0. */
  public static Backoff none() {
    return NONE;
  }

  /**
   * The delay before retry number {@code retry} (1 for the first retry), in nanoseconds.
   *
   * @param previousDelayNanos the delay used before the previous retry (0 before the first; DECORRELATED then uses
   *     base)
   * @param random the random source; not used by {@link Jitter#NONE}
   * @throws IllegalArgumentException if {@code retry < 1}
   */
  public long delayNanos(int retry, long previousDelayNanos, RandomGenerator random) {
    if (retry < 1) {
      throw new IllegalArgumentException("retry must be >= 1, was " + retry);
    }
    if (capNanos == 0L) {
      return 0L;
    }
    switch (jitter) {
      case NONE:
        return exponentialNanos(retry);
      case FULL:
        return uniformInclusive(random, 0L, exponentialNanos(retry));
      case EQUAL: {
        long exponential = exponentialNanos(retry);
        long half = exponential / 2;
        return half + uniformInclusive(random, 0L, exponential - half);
      }
      case DECORRELATED: {
        long previous = Math.max(baseNanos, previousDelayNanos);
        long upper = previous > Long.MAX_VALUE / 3 ? Long.MAX_VALUE : previous * 3;
        return Math.min(capNanos, uniformInclusive(random, baseNanos, upper));
      }
      default:
        throw new AssertionError(jitter);
    }
  }

  /**
   * The delay before retry number {@code retry}, for a caller that does not keep the delay it used before (one that
   * reads the attempt count back from a store, such as the outbox relay): as {@link #delayNanos(int, long,
   * RandomGenerator)}, with {@link Jitter#DECORRELATED} taking the exponential delay of the retry before (without
   * jitter) as the previous one, so that its delays grow with the retries as the other jitters' do.
   *
   * @throws IllegalArgumentException if {@code retry < 1}
   */
  public long delayNanos(int retry, RandomGenerator random) {
    long previous = jitter == Jitter.DECORRELATED && retry > 1 ? exponentialNanos(retry - 1) : 0L;
    return delayNanos(retry, previous, random);
  }

  /** {@code min(cap, base * 2^(retry-1))} without overflow. */
  long exponentialNanos(int retry) {
    int shift = retry - 1;
    if (shift >= 62 || baseNanos > (capNanos >> shift)) {
      return capNanos;
    }
    return baseNanos << shift;
  }

  private static long uniformInclusive(RandomGenerator random, long low, long high) {
    if (high <= low) {
      return low;
    }
    if (high == Long.MAX_VALUE) {
      return random.nextLong(low, high);
    }
    return random.nextLong(low, high + 1);
  }

  /** The randomisation. */
  public Jitter jitter() {
    return jitter;
  }

  /** The delay before the first retry, before jitter; zero for {@link #none()}. */
  public Duration base() {
    return base;
  }

  /** The largest delay; zero for {@link #none()}. */
  public Duration cap() {
    return cap;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Backoff
        && ((Backoff) o).jitter == jitter
        && ((Backoff) o).baseNanos == baseNanos
        && ((Backoff) o).capNanos == capNanos;
  }

  @Override
  public int hashCode() {
    return Objects.hash(jitter, baseNanos, capNanos);
  }

  @Override
  public String toString() {
    return this == NONE ? "Backoff[none]" : "Backoff[base=" + base + ", cap=" + cap + ", jitter=" + jitter + "]";
  }
}
