package dev.idem.core;

import java.util.BitSet;

/**
 * Which outcomes are kept and replayed. Immutable and thread-safe.
 *
 * <p>By default 2xx and deterministic 4xx (and 1xx/3xx) are kept; 408, 409, 425, 429 and every 5xx are never kept,
 * so the key is free for the retry. An exception thrown by the work is never kept: a work that wants a kept failure
 * returns a response with a 4xx status.
 */
public final class KeepPolicy {
  private static final KeepPolicy DEFAULTS = builder().build();

  private final BitSet kept;

  private KeepPolicy(BitSet kept) {
    this.kept = kept;
  }

  public static KeepPolicy ofDefaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.kept = (BitSet) kept.clone();
    return b;
  }

  /** Whether a response with this status is kept. */
  public boolean keeps(int status) {
    return status >= 100 && status <= 999 && kept.get(status);
  }

  /** The state a kept response leaves the record in: FAILED for 4xx and above, COMPLETED otherwise. */
  public static RecordState stateFor(int status) {
    return status >= 400 ? RecordState.FAILED : RecordState.COMPLETED;
  }

  @Override
  public String toString() {
    return "KeepPolicy" + kept;
  }

  /** Mutable, not thread-safe. Starts from the defaults. */
  public static final class Builder {
    private BitSet kept = new BitSet(1000);

    private Builder() {
      kept.set(100, 500);
      for (int s : new int[] {408, 409, 425, 429}) {
        kept.clear(s);
      }
    }

    /** Keeps these statuses too. */
    public Builder keep(int... statuses) {
      for (int s : statuses) {
        kept.set(check(s));
      }
      return this;
    }

    /** Never keeps these statuses. */
    public Builder neverKeep(int... statuses) {
      for (int s : statuses) {
        kept.clear(check(s));
      }
      return this;
    }

    /** Never keeps any status in {@code [from, to]}. */
    public Builder neverKeepRange(int from, int to) {
      check(from);
      check(to);
      if (from > to) {
        throw new IllegalArgumentException("neverKeepRange: from " + from + " is after to " + to);
      }
      kept.clear(from, to + 1);
      return this;
    }

    public KeepPolicy build() {
      int fiveHundred = kept.nextSetBit(500);
      if (fiveHundred >= 500 && fiveHundred < 600) {
        throw new IllegalArgumentException(
            "KeepPolicy: 5xx statuses are transient and can never be kept, got " + fiveHundred);
      }
      return new KeepPolicy((BitSet) kept.clone());
    }

    private static int check(int s) {
      if (s < 100 || s > 999) {
        throw new IllegalArgumentException("status must be 100..999, got " + s);
      }
      return s;
    }
  }
}
