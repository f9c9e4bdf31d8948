package dev.idem.retry.simulation;

import dev.idem.retry.Backoff;
import dev.idem.retry.Jitter;
import dev.idem.retry.RetryBudget;
import java.time.Duration;

/**
 * How a simulated client waits after a conflict. Each constant has a short {@link #id() id} used on the command line.
 */
public enum Strategy {
  /** Read again at once: {@link Backoff#none()}. */
  NONE("none"),
  /**
   * Capped exponential without jitter: {@code min(cap, base * 2^(retry-1))}, or {@code min(cap, base * 2^retry)} under
   * {@link Model#AWS_2015}.
   */
  EXPONENTIAL("exponential"),
  /** Capped exponential with full jitter: uniform in {@code [0, exponential]}. */
  FULL("full"),
  /** Capped exponential with equal jitter: half of it fixed, the other half uniform. */
  EQUAL("equal"),
  /** Decorrelated jitter: {@code min(cap, uniform(base, 3 * previous sleep))}. */
  DECORRELATED("decorrelated"),
  /**
   * Idem's default: {@code Backoff.exponential(base, cap, Jitter.FULL)}, in both models. Under {@link Model#IDEM} this
   * is the computation {@link #FULL} makes too; listed under its own name so that tables show where Idem's default
   * stands.
   */
  IDEM("idem"),
  /**
   * Idem's default plus one {@code RetryBudget.tokenBucket(10, 0.1)} shared by all clients. A retry the budget refuses
   * is not sent: the client waits for its next backoff slot and then sends a fresh request, which a budget never
   * refuses (see {@link ContentionSimulation} for the exact rule).
   */
  IDEM_BUDGET("idem-budget");

  /** Capacity of the {@link #IDEM_BUDGET} token bucket. */
  static final double BUDGET_MAX_TOKENS = 10;
  /** Tokens each success adds back to the {@link #IDEM_BUDGET} token bucket. */
  static final double BUDGET_TOKEN_RATIO = 0.1;

  private final String id;

  Strategy(String id) {
    this.id = id;
  }

  /** The name used on the command line and in CSV output, for example {@code idem-budget}. */
  public String id() {
    return id;
  }

  /**
   * The strategy with this {@link #id() id}.
   *
   * @throws IllegalArgumentException naming the unknown id and the known ones
   */
  public static Strategy ofId(String id) {
    return Ids.find(values(), Strategy::id, id, "strategy", "strategies");
  }

  /** The ids of all strategies, comma-separated, in declaration order. */
  public static String ids() {
    return Ids.join(values(), Strategy::id);
  }

  /**
   * The backoff this strategy uses under {@code model}. Under {@link Model#AWS_2015} the exponential term after the
   * {@code n}-th failure is {@code base * 2^n}, which is Idem's {@code base' * 2^(n-1)} with {@code base' = 2 * base}:
   * so the published exponential strategies run on Idem's own {@link Backoff} with a doubled base. Decorrelated jitter
   * keeps {@code base} (its range starts at base, and its first sleep is drawn from {@code [base, 3 * base]} in both
   * models), and {@link #IDEM} and {@link #IDEM_BUDGET} keep Idem's own conventions in both models.
   */
  Backoff backoff(Model model, Duration base, Duration cap) {
    Duration exponentialBase = model == Model.AWS_2015 ? base.multipliedBy(2) : base;
    switch (this) {
      case NONE:
        return Backoff.none();
      case EXPONENTIAL:
        return Backoff.exponential(exponentialBase, cap, Jitter.NONE);
      case FULL:
        return Backoff.exponential(exponentialBase, cap, Jitter.FULL);
      case EQUAL:
        return Backoff.exponential(exponentialBase, cap, Jitter.EQUAL);
      case DECORRELATED:
        return Backoff.exponential(base, cap, Jitter.DECORRELATED);
      case IDEM:
      case IDEM_BUDGET:
        return Backoff.exponential(base, cap, Jitter.FULL);
      default:
        throw new AssertionError(this);
    }
  }

  /** A fresh budget for one run, shared by all its clients, or null when this strategy has none. */
  RetryBudget newBudget() {
    return this == IDEM_BUDGET ? RetryBudget.tokenBucket(BUDGET_MAX_TOKENS, BUDGET_TOKEN_RATIO) : null;
  }

  @Override
  public String toString() {
    return id;
  }
}
