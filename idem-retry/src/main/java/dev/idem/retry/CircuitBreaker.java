package dev.idem.retry;

import dev.idem.retry.internal.SlidingWindowCircuitBreaker;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;

/**
 * Stops calling a destination that keeps failing. {@link State#CLOSED}: calls pass and outcomes are recorded in a
 * sliding window (the last N calls, or the calls of the last T); once the window holds at least the minimum number of
 * calls and the failure rate reaches the threshold, it opens. {@link State#OPEN}: calls are refused for the open
 * duration, which is multiplied at every re-open (up to a maximum) and reset when the breaker closes.
 * {@link State#HALF_OPEN}: N probe calls pass; all succeed, it closes; one fails, it opens again. A half-open breaker
 * that has had no verdict for one (current) open duration lets a fresh set of probes through, so probes that never
 * report cannot keep it half-open for ever.
 *
 * <p>Thread-safe; shared per destination. Time comes from the injected clock. Use with
 * {@link Retry#withCircuitBreaker(CircuitBreaker)}, or directly: {@link #tryAcquirePermission()} before a call, then
 * exactly one of {@link #onSuccess()}, {@link #onFailure()} or (the call was abandoned without an outcome)
 * {@link #onIgnored()}.
 *
 * <p>Permits: {@link #acquirePermit()} is {@link #tryAcquirePermission()} returning a permit that remembers the state
 * it was granted in; handing it back with {@link #onSuccess(long)}, {@link #onFailure(long)} or
 * {@link #onIgnored(long)} lets the breaker ignore outcomes of calls admitted in an earlier state (a call admitted
 * while closed that ends while half-open neither closes nor re-opens the breaker; only probes decide). {@link Retry}
 * uses permits. The permit methods have defaults that fall back on the permit-less ones, for other implementations.
 */
public interface CircuitBreaker {
  /** The states. */
  enum State { CLOSED, OPEN, HALF_OPEN }

  /** How the sliding window is measured. */
  enum WindowType { COUNT_BASED, TIME_BASED }

  /** Whether a call may go ahead now; in half-open, true takes one of the probe permits. Never allocates. */
  boolean tryAcquirePermission();

  /** Records a successful call. */
  void onSuccess();

  /** Records a failed call. */
  void onFailure();

  /**
   * The call let through by the last permission ended without an outcome (it was cancelled): in half-open, gives the
   * probe permit back. Default: does nothing.
   */
  default void onIgnored() {}

  /**
   * Like {@link #tryAcquirePermission()}, but returns a permit ({@code >= 0}) to hand back with the call's outcome,
   * or {@code -1} when the call may not go ahead. Never allocates. Default: {@code 0} or {@code -1}.
   */
  default long acquirePermit() {
    return tryAcquirePermission() ? 0L : -1L;
  }

  /**
   * Records a successful call admitted with {@code permit}; ignored in half-open unless the permit is one of the
   * current probes. Default: {@link #onSuccess()}.
   */
  default void onSuccess(long permit) {
    onSuccess();
  }

  /**
   * Records a failed call admitted with {@code permit}; ignored in half-open unless the permit is one of the current
   * probes. Default: {@link #onFailure()}.
   */
  default void onFailure(long permit) {
    onFailure();
  }

  /**
   * The call admitted with {@code permit} ended without an outcome (cancelled, or never sent): a current probe
   * permit is given back. Default: {@link #onIgnored()}.
   */
  default void onIgnored(long permit) {
    onIgnored();
  }

  /** The current state (an open breaker whose open duration has passed reports {@link State#HALF_OPEN}). */
  State state();

  /** The name, for messages and meters. */
  String name();

  /** A builder with defaults: count window of 100 calls, 50 % threshold, 20 min calls, 60 s open (x2, max 10 min). */
  static Builder builder() {
    return new Builder();
  }

  /** Mutable, not thread-safe; validates eagerly. */
  final class Builder {
    private String name = "circuit-breaker";
    private WindowType windowType = WindowType.COUNT_BASED;
    private int windowSize = 100;
    private Duration windowDuration = Duration.ofSeconds(60);
    private double failureRateThreshold = 50.0;
    private int minimumCalls = 20;
    private Duration openDuration = Duration.ofSeconds(60);
    private double openDurationMultiplier = 2.0;
    private Duration maxOpenDuration = Duration.ofMinutes(10);
    private int halfOpenProbes = 5;
    private Clock clock = Clock.systemUTC();

    private Builder() {}

    /** The name used in messages; default {@code circuit-breaker}. */
    public Builder name(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank()) {
        throw new IllegalArgumentException("name must not be blank, was '" + name + "'");
      }
      this.name = name;
      return this;
    }

    /** Count-based window: the outcomes of the last {@code calls} calls. */
    public Builder countWindow(int calls) {
      if (calls < 1) {
        throw new IllegalArgumentException("countWindow calls must be >= 1, was " + calls);
      }
      this.windowType = WindowType.COUNT_BASED;
      this.windowSize = calls;
      return this;
    }

    /** Time-based window: the outcomes of the calls in the last {@code window} (ten buckets). */
    public Builder timeWindow(Duration window) {
      Objects.requireNonNull(window, "timeWindow");
      if (window.toMillis() < 10) {
        throw new IllegalArgumentException("timeWindow must be >= 10 ms, was " + window);
      }
      this.windowType = WindowType.TIME_BASED;
      this.windowDuration = window;
      return this;
    }

    /** Opens when the failure rate in percent reaches this, in (0, 100]. Default 50. */
    public Builder failureRateThreshold(double percent) {
      if (!(percent > 0 && percent <= 100)) {
        throw new IllegalArgumentException("failureRateThreshold must be in (0, 100] percent, was " + percent);
      }
      this.failureRateThreshold = percent;
      return this;
    }

    /** Calls the window must hold before the rate is judged. Default 20. */
    public Builder minimumCalls(int calls) {
      if (calls < 1) {
        throw new IllegalArgumentException("minimumCalls must be >= 1, was " + calls);
      }
      this.minimumCalls = calls;
      return this;
    }

    /**
     * How long the breaker stays open the first time ({@code first}); each re-open without closing in between
     * multiplies it by {@code multiplier} (>= 1), up to {@code max}.
     */
    public Builder openDuration(Duration first, double multiplier, Duration max) {
      Objects.requireNonNull(first, "openDuration");
      Objects.requireNonNull(max, "maxOpenDuration");
      if (first.isNegative() || first.isZero()) {
        throw new IllegalArgumentException("openDuration must be > 0, was " + first);
      }
      if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
        throw new IllegalArgumentException("openDuration multiplier must be >= 1 and finite, was " + multiplier);
      }
      if (max.compareTo(first) < 0) {
        throw new IllegalArgumentException("maxOpenDuration must be >= openDuration (" + first + "), was " + max);
      }
      this.openDuration = first;
      this.openDurationMultiplier = multiplier;
      this.maxOpenDuration = max;
      return this;
    }

    /** A fixed open duration (no backoff). */
    public Builder openDuration(Duration duration) {
      return openDuration(duration, 1.0, duration);
    }

    /** Probe calls let through in half-open. Default 5. */
    public Builder halfOpenProbes(int probes) {
      if (probes < 1) {
        throw new IllegalArgumentException("halfOpenProbes must be >= 1, was " + probes);
      }
      this.halfOpenProbes = probes;
      return this;
    }

    /** The clock for open durations and time windows. Default the system UTC clock. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The breaker, closed. */
    public CircuitBreaker build() {
      if (windowType == WindowType.COUNT_BASED && minimumCalls > windowSize) {
        throw new IllegalArgumentException(
            "minimumCalls must be <= countWindow (" + windowSize + ") or the breaker can never open, was "
                + minimumCalls);
      }
      return new SlidingWindowCircuitBreaker(
          name, windowType, windowSize, windowDuration.toMillis(), failureRateThreshold, minimumCalls,
          openDuration.toNanos(), openDurationMultiplier, maxOpenDuration.toNanos(), halfOpenProbes, clock);
    }
  }
}
