package dev.idem.retry.internal;

import dev.idem.retry.CircuitBreaker;
import java.time.Clock;

/**
 * {@link CircuitBreaker#builder()}. All state sits behind one monitor held for a few field updates; nothing
 * allocates after construction. The count window is a ring of booleans; the time window is ten buckets of calls and
 * failures. Time is read with {@link Clock#millis()}. The permit-less outcome methods count, in half-open, as the
 * outcome of a current probe while one is outstanding (callers without permits cannot say more), and are ignored
 * otherwise; {@link dev.idem.retry.Retry} uses permits.
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
  /** Counts state changes; part of every permit. */
  private long generation;
  private long halfOpenSinceMillis;

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
  public boolean tryAcquirePermission() {
    return acquirePermit() >= 0;
  }

  /**
   * A permit is {@code generation << 1 | probe}: the generation counts state changes, so an outcome reported with a
   * permit of an earlier generation, or a non-probe permit, cannot decide a half-open round.
   */
  @Override
  public synchronized long acquirePermit() {
    switch (currentState(clock.millis())) {
      case CLOSED:
        return generation << 1;
      case HALF_OPEN:
        if (probesIssued < halfOpenProbes) {
          probesIssued++;
          return generation << 1 | 1L;
        }
        return -1L;
      default:
        return -1L;
    }
  }

  @Override
  public synchronized void onSuccess() {
    long now = clock.millis();
    outcome(now, permitlessPermit(now), false);
  }

  @Override
  public synchronized void onFailure() {
    long now = clock.millis();
    outcome(now, permitlessPermit(now), true);
  }

  /** For the permit-less outcome methods: a current probe while one is outstanding, else a non-probe. */
  private long permitlessPermit(long now) {
    currentState(now);
    return probesIssued > probesSucceeded ? generation << 1 | 1L : generation << 1;
  }

  @Override
  public synchronized void onIgnored() {
    long now = clock.millis();
    if (currentState(now) == State.HALF_OPEN && probesIssued > probesSucceeded) {
      probesIssued--;
    }
  }

  @Override
  public synchronized void onSuccess(long permit) {
    outcome(clock.millis(), permit, false);
  }

  @Override
  public synchronized void onFailure(long permit) {
    outcome(clock.millis(), permit, true);
  }

  @Override
  public synchronized void onIgnored(long permit) {
    long now = clock.millis();
    if (currentState(now) == State.HALF_OPEN && isCurrentProbe(permit) && probesIssued > 0) {
      probesIssued--;
    }
  }

  private boolean isCurrentProbe(long permit) {
    return permit >= 0 && (permit & 1L) == 1L && (permit >>> 1) == generation;
  }

  private void outcome(long now, long permit, boolean failure) {
    switch (currentState(now)) {
      case CLOSED:
        record(now, failure);
        if (failure && shouldOpen(now)) {
          open(now, firstOpenMillis);
        }
        return;
      case HALF_OPEN:
        if (!isCurrentProbe(permit)) {
          // a call admitted while closed, or a probe of an earlier round: only this round's probes decide
          return;
        }
        if (failure) {
          double next = currentOpenMillis * openMultiplier;
          open(now, next >= maxOpenMillis ? maxOpenMillis : (long) next);
        } else {
          probesSucceeded++;
          if (probesSucceeded >= halfOpenProbes) {
            close();
          }
        }
        return;
      default:
        // a call let through before the breaker opened; its outcome changes nothing
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

  /**
   * Moves OPEN to HALF_OPEN once the open duration has passed, and starts a fresh half-open round when the current
   * one has had no verdict for one open duration (probes that never report must not keep it half-open for ever).
   */
  private State currentState(long now) {
    if (state == State.OPEN && now >= openUntilMillis) {
      halfOpen(now);
    } else if (state == State.HALF_OPEN && now - halfOpenSinceMillis >= currentOpenMillis) {
      halfOpen(now);
    }
    return state;
  }

  private void halfOpen(long now) {
    state = State.HALF_OPEN;
    generation++;
    halfOpenSinceMillis = now;
    probesIssued = 0;
    probesSucceeded = 0;
  }

  private void open(long now, long durationMillis) {
    generation++;
    state = State.OPEN;
    currentOpenMillis = durationMillis;
    openUntilMillis = now + durationMillis;
  }

  private void close() {
    generation++;
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
