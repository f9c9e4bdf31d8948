package dev.idem.retry.internal;

import dev.idem.retry.CircuitBreaker;
import java.time.Clock;

/**
 * {@link CircuitBreaker#builder()}. All state sits behind one monitor held for a few field updates; nothing
 * allocates after construction. The count window is a ring of booleans; the time window is ten buckets of calls and
 * failures. Time is read with {@link Clock#millis()}.
 */
public final class SlidingWindowCircuitBreaker implements CircuitBreaker {
  private static final int BUCKETS = 10;

  private final String name;
  private final WindowType windowType;
  private final double threshold;
  private final int minimumCalls;
  private final long firstOpenMillis;
  private final double openMultiplier;
  private final long maxOpenMillis;
  private final int halfOpenProbes;
  private final Clock clock;

  // count window
  private final boolean[] ring;
  private int ringNext;
  private int ringCount;
  private int ringFailures;
  // time window
  private final long bucketMillis;
  private final long[] bucketEpochs;
  private final int[] bucketCalls;
  private final int[] bucketFailures;

  private State state = State.CLOSED;
  private long openUntilMillis;
  private long currentOpenMillis;
  private int probesIssued;
  private int probesSucceeded;

  public SlidingWindowCircuitBreaker(
      String name, WindowType windowType, int windowSize, long windowMillis, double thresholdPercent,
      int minimumCalls, long openNanos, double openMultiplier, long maxOpenNanos, int halfOpenProbes, Clock clock) {
    this.name = name;
    this.windowType = windowType;
    this.threshold = thresholdPercent;
    this.minimumCalls = minimumCalls;
    this.firstOpenMillis = Math.max(1L, openNanos / 1_000_000L);
    this.openMultiplier = openMultiplier;
    this.maxOpenMillis = Math.max(firstOpenMillis, maxOpenNanos / 1_000_000L);
    this.halfOpenProbes = halfOpenProbes;
    this.clock = clock;
    this.currentOpenMillis = firstOpenMillis;
    this.ring = new boolean[windowType == WindowType.COUNT_BASED ? windowSize : 1];
    this.bucketMillis = Math.max(1L, windowMillis / BUCKETS);
    this.bucketEpochs = new long[BUCKETS];
    this.bucketCalls = new int[BUCKETS];
    this.bucketFailures = new int[BUCKETS];
    java.util.Arrays.fill(bucketEpochs, Long.MIN_VALUE);
  }

  @Override
  public synchronized boolean tryAcquirePermission() {
    switch (currentState(clock.millis())) {
      case CLOSED:
        return true;
      case HALF_OPEN:
        if (probesIssued < halfOpenProbes) {
          probesIssued++;
          return true;
        }
        return false;
      default:
        return false;
    }
  }

  @Override
  public synchronized void onSuccess() {
    long now = clock.millis();
    switch (currentState(now)) {
      case CLOSED:
        record(now, false);
        return;
      case HALF_OPEN:
        probesSucceeded++;
        if (probesSucceeded >= halfOpenProbes) {
          close();
        }
        return;
      default:
        // a call let through before the breaker opened; its success does not reopen anything
    }
  }

  @Override
  public synchronized void onFailure() {
    long now = clock.millis();
    switch (currentState(now)) {
      case CLOSED:
        record(now, true);
        if (shouldOpen(now)) {
          open(now, firstOpenMillis);
        }
        return;
      case HALF_OPEN: {
        double next = currentOpenMillis * openMultiplier;
        open(now, next >= maxOpenMillis ? maxOpenMillis : (long) next);
        return;
      }
      default:
        // already open
    }
  }

  @Override
  public synchronized State state() {
    return currentState(clock.millis());
  }

  @Override
  public String name() {
    return name;
  }

  /** Moves OPEN to HALF_OPEN once the open duration has passed. */
  private State currentState(long now) {
    if (state == State.OPEN && now >= openUntilMillis) {
      state = State.HALF_OPEN;
      probesIssued = 0;
      probesSucceeded = 0;
    }
    return state;
  }

  private void open(long now, long durationMillis) {
    state = State.OPEN;
    currentOpenMillis = durationMillis;
    openUntilMillis = now + durationMillis;
  }

  private void close() {
    state = State.CLOSED;
    currentOpenMillis = firstOpenMillis;
    ringNext = 0;
    ringCount = 0;
    ringFailures = 0;
    java.util.Arrays.fill(ring, false);
    java.util.Arrays.fill(bucketEpochs, Long.MIN_VALUE);
  }

  private void record(long now, boolean failure) {
    if (windowType == WindowType.COUNT_BASED) {
      if (ringCount == ring.length) {
        if (ring[ringNext]) {
          ringFailures--;
        }
      } else {
        ringCount++;
      }
      ring[ringNext] = failure;
      if (failure) {
        ringFailures++;
      }
      ringNext = (ringNext + 1) % ring.length;
    } else {
      long epoch = Math.floorDiv(now, bucketMillis);
      int slot = (int) Math.floorMod(epoch, (long) BUCKETS);
      if (bucketEpochs[slot] != epoch) {
        bucketEpochs[slot] = epoch;
        bucketCalls[slot] = 0;
        bucketFailures[slot] = 0;
      }
      bucketCalls[slot]++;
      if (failure) {
        bucketFailures[slot]++;
      }
    }
  }

  private boolean shouldOpen(long now) {
    int calls;
    int failures;
    if (windowType == WindowType.COUNT_BASED) {
      calls = ringCount;
      failures = ringFailures;
    } else {
      long epoch = Math.floorDiv(now, bucketMillis);
      calls = 0;
      failures = 0;
      for (int i = 0; i < BUCKETS; i++) {
        if (bucketEpochs[i] > epoch - BUCKETS) {
          calls += bucketCalls[i];
          failures += bucketFailures[i];
        }
      }
    }
    return calls >= minimumCalls && failures * 100.0 >= threshold * calls;
  }

  @Override
  public String toString() {
    return "circuit breaker '" + name + "'";
  }
}
