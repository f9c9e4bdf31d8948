package dev.idem.retry.internal;

import dev.idem.retry.RetryBudget;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * {@link RetryBudget#ratio(double, int, Duration, Clock)}. The window is a ring of ten buckets (each a tenth of the
 * window) counting requests and retries; a bucket older than the window is reset when its slot comes round again.
 *
 * <p>Thread-safe through a monitor held for a few array operations; nothing allocates, and the clock is read with
 * {@link Clock#millis()} (no {@code Instant} for the system clock). Lock-free would need a consistent snapshot of
 * ten bucket pairs, which costs more than it saves here.
 */
public final class RatioRetryBudget implements RetryBudget {
  private static final int BUCKETS = 10;

  private final double ratio;
  private final double floor;
  private final long bucketMillis;
  private final Clock clock;
  private final long[] epochs = new long[BUCKETS];
  private final long[] requests = new long[BUCKETS];
  private final long[] retries = new long[BUCKETS];

  public RatioRetryBudget(double ratio, int minRetriesPerSecond, Duration window, Clock clock) {
    Objects.requireNonNull(window, "window");
    Objects.requireNonNull(clock, "clock");
    if (!(ratio >= 0) || Double.isInfinite(ratio)) {
      throw new IllegalArgumentException("ratio budget ratio must be >= 0 and finite, was " + ratio);
    }
    if (minRetriesPerSecond < 0) {
      throw new IllegalArgumentException("ratio budget minRetriesPerSecond must be >= 0, was " + minRetriesPerSecond);
    }
    if (window.toMillis() < 1) {
      throw new IllegalArgumentException("ratio budget window must be >= 1 ms, was " + window);
    }
    this.ratio = ratio;
    this.floor = minRetriesPerSecond * (window.toMillis() / 1000.0);
    this.bucketMillis = Math.max(1L, window.toMillis() / BUCKETS);
    this.clock = clock;
    java.util.Arrays.fill(epochs, Long.MIN_VALUE);
  }

  @Override
  public synchronized void onRequest() {
    requests[slot(clock.millis())]++;
  }

  @Override
  public void onFailure() {}

  @Override
  public void onSuccess() {}

  @Override
  public synchronized boolean tryAcquireRetry() {
    long now = clock.millis();
    int slot = slot(now);
    if (allowed(now) < 1.0) {
      return false;
    }
    retries[slot]++;
    return true;
  }

  @Override
  public synchronized double remaining() {
    return Math.max(0.0, Math.floor(allowed(clock.millis())));
  }

  private double allowed(long now) {
    long epoch = Math.floorDiv(now, bucketMillis);
    long requestSum = 0;
    long retrySum = 0;
    for (int i = 0; i < BUCKETS; i++) {
      if (epochs[i] > epoch - BUCKETS) {
        requestSum += requests[i];
        retrySum += retries[i];
      }
    }
    return ratio * requestSum + floor - retrySum;
  }

  /** The slot for {@code now}, reset if it still holds an older bucket. */
  private int slot(long now) {
    long epoch = Math.floorDiv(now, bucketMillis);
    int slot = (int) Math.floorMod(epoch, (long) BUCKETS);
    if (epochs[slot] != epoch) {
      epochs[slot] = epoch;
      requests[slot] = 0;
      retries[slot] = 0;
    }
    return slot;
  }

  @Override
  public String toString() {
    return "RetryBudget[ratio=" + ratio + ", floor=" + floor + ", window=" + (bucketMillis * BUCKETS) + "ms]";
  }
}
