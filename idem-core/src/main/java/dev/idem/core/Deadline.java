package dev.idem.core;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * An instant on a monotonic clock by which an answer is no longer useful: the time budget of a request that travels
 * from a client through every service it reaches (docs/deadlines.md). Immutable and thread-safe.
 *
 * <pre>{@code
 * Deadline deadline = Deadline.after(Duration.ofMillis(800));
 * try (Deadline.Binding b = deadline.enter()) {
 *   client.send(intent);   // idem-client sends at most the time that remains, and never more than its own deadline
 * }
 * }</pre>
 *
 * <p>Time comes from a nano source ({@link System#nanoTime()} unless one is injected with
 * {@link #after(Duration, LongSupplier)}); instants are compared by difference, so wrap-around of the source is
 * harmless. Two deadlines can only be compared when they read the same source (the same {@link LongSupplier}
 * instance).
 *
 * <p><b>The current deadline is confined to one thread.</b> {@link #enter()} makes a deadline the
 * {@linkplain #current() current} one of the calling thread until the returned {@link Binding} is closed; nesting
 * keeps the smaller of the outer and the inner deadline, so a budget only ever shrinks inward. Work handed to another
 * thread (an executor, a {@code CompletableFuture}, an async servlet) does not see it: pass the {@code Deadline}
 * along explicitly and {@link #enter()} it there.
 */
public final class Deadline implements Comparable<Deadline> {
  /** {@link System#nanoTime()}, the default nano source. */
  public static final LongSupplier SYSTEM_NANOS = System::nanoTime;

  /** Far enough to mean "practically never" while keeping every difference of two instants free of overflow. */
  private static final long MAX_NANOS = Long.MAX_VALUE / 4;
  private static final ThreadLocal<Deadline> CURRENT = new ThreadLocal<>();

  private final LongSupplier nanos;
  private final long atNanos;

  private Deadline(LongSupplier nanos, long atNanos) {
    this.nanos = nanos;
    this.atNanos = atNanos;
  }

  /**
   * The deadline {@code budget} from now on {@link System#nanoTime()}. A zero or negative budget gives a deadline
   * that has already passed; a budget beyond about 73 years is capped there.
   */
  public static Deadline after(Duration budget) {
    return after(budget, SYSTEM_NANOS);
  }

  /** The deadline {@code budget} from now on {@code nanoSource} (for tests: a fake that the test advances). */
  public static Deadline after(Duration budget, LongSupplier nanoSource) {
    Objects.requireNonNull(budget, "budget");
    Objects.requireNonNull(nanoSource, "nanoSource");
    return new Deadline(nanoSource, nanoSource.getAsLong() + clamp(budget));
  }

  private static long clamp(Duration d) {
    if (d.compareTo(Duration.ofNanos(MAX_NANOS)) > 0) {
      return MAX_NANOS;
    }
    if (d.compareTo(Duration.ofNanos(-MAX_NANOS)) < 0) {
      return -MAX_NANOS;
    }
    return d.toNanos();
  }

  /** The calling thread's current deadline: the innermost {@link #enter() entered} one, if any. */
  public static Optional<Deadline> current() {
    return Optional.ofNullable(CURRENT.get());
  }

  /** The time left, negative once the deadline has passed. */
  public Duration remaining() {
    return Duration.ofNanos(remainingNanos());
  }

  /** The time left in nanoseconds, negative once the deadline has passed. */
  public long remainingNanos() {
    return atNanos - nanos.getAsLong();
  }

  /** The whole milliseconds left, rounded down; 0 or less once less than a millisecond is left. */
  public long remainingMillis() {
    return Math.floorDiv(remainingNanos(), 1_000_000L);
  }

  /** Whether the deadline has passed: nothing remains. */
  public boolean isExpired() {
    return remainingNanos() <= 0;
  }

  /**
   * The earlier of this deadline and {@code other}.
   *
   * @throws IllegalArgumentException when the two read different nano sources
   */
  public Deadline min(Deadline other) {
    return compareTo(other) <= 0 ? this : other;
  }

  /**
   * Orders by instant, the earlier first.
   *
   * @throws IllegalArgumentException when the two read different nano sources
   */
  @Override
  public int compareTo(Deadline other) {
    Objects.requireNonNull(other, "other");
    if (other.nanos != nanos) {
      throw new IllegalArgumentException("cannot compare deadlines on different nano sources: " + this + " and "
          + other);
    }
    return Long.signum(atNanos - other.atNanos);
  }

  /**
   * Makes this deadline, or the calling thread's current one when that is earlier, the current deadline of the
   * calling thread until the returned binding is closed. Use it in try-with-resources.
   *
   * @throws IllegalArgumentException when the current deadline reads another nano source
   */
  public Binding enter() {
    Deadline previous = CURRENT.get();
    Deadline effective = previous == null ? this : previous.min(this);
    CURRENT.set(effective);
    return new Binding(previous, effective, Thread.currentThread());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Deadline d && d.nanos == nanos && d.atNanos == atNanos;
  }

  @Override
  public int hashCode() {
    return Long.hashCode(atNanos) * 31 + System.identityHashCode(nanos);
  }

  @Override
  public String toString() {
    long left = remainingNanos();
    return left > 0 ? "Deadline[" + Duration.ofNanos(left).toMillis() + " ms left]"
        : "Deadline[passed " + Duration.ofNanos(-left).toMillis() + " ms ago]";
  }

  /**
   * A deadline made current on one thread by {@link Deadline#enter()}; {@link #close()} restores the deadline that
   * was current before. Close it on the thread that entered it, innermost first (try-with-resources does both).
   * Closing twice is harmless. Not thread-safe.
   */
  public static final class Binding implements AutoCloseable {
    private final Deadline previous;
    private final Deadline effective;
    private final Thread owner;
    private boolean closed;

    private Binding(Deadline previous, Deadline effective, Thread owner) {
      this.previous = previous;
      this.effective = effective;
      this.owner = owner;
    }

    /** The deadline current inside this binding: the smaller of the entered one and the one around it. */
    public Deadline deadline() {
      return effective;
    }

    /**
     * Restores the previous current deadline (none if there was none).
     *
     * @throws IllegalStateException when called on another thread than the one that entered
     */
    @Override
    public void close() {
      if (Thread.currentThread() != owner) {
        throw new IllegalStateException("a deadline binding must be closed on the thread that entered it ("
            + owner.getName() + "), not on " + Thread.currentThread().getName());
      }
      if (closed) {
        return;
      }
      closed = true;
      if (previous == null) {
        CURRENT.remove();
      } else {
        CURRENT.set(previous);
      }
    }
  }
}
