package dev.idem.servlet.budget;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * The sliding window behind {@link RetryBudgetFilter}: a ring of {@value #BUCKETS} buckets, each a tenth of the
 * window, counting served requests, admitted retries and shed retries. Thread-safe and lock-free.
 *
 * <p>Time comes from a monotonic nano source ({@link System#nanoTime()} unless another is injected), never from a
 * wall clock: a wall clock stepped back (by NTP, or an operator) would put every bucket in the future, and the window
 * would count nothing, and refuse nothing, for the length of the step.
 *
 * <p>Implementation note. A bucket holds its epoch (its start, in bucket lengths since the nano source's origin), one
 * {@link AtomicLong} that packs admitted retries (high 32 bits) and served requests (low 32 bits), and a
 * {@link LongAdder} of shed retries. Packing makes "a retry is also a request" one atomic add, so a reader sees
 * both halves of an admission or neither; two separate counters would let a reader see a request whose retry it
 * misses and admit one retry too many under contention. A bucket therefore holds at most 2^32 - 1 requests (four
 * billion per tenth of the window).
 *
 * <p>When time moves into a slot that still holds an old bucket, a fresh bucket replaces it by compare-and-set: one
 * small allocation per bucket length (a second with the default window), none per request. A thread that raced the
 * replacement and counts into the old bucket loses a count of a bucket that has just left the window, which is
 * harmless.
 *
 * <p>A retry is admitted optimistically: it is counted, then the window is summed, and if that put retries above the
 * share the count is taken back. Any two concurrent admissions each count before they read, so at least one of them
 * sees the other; the last to count sees every admission before it. Counts of retries that are about to be refused
 * add the same amount to retries and requests, which only raises a share below one. So, within one window, the
 * admitted retries never exceed the share of served requests (once {@code minRequests} is reached): contention can
 * make the filter refuse a retry that it could have admitted, never the reverse.
 *
 * <p>Why not idem-retry's {@code RetryBudget.ratio}: its semantics are close (retries &lt;= ratio * first attempts
 * over ten buckets, which is a share of {@code ratio / (1 + ratio)}), but it holds a monitor on every call, which a
 * server's request path should not; it has a floor in retries per second rather than a minimum number of requests;
 * it cannot report the share or the refusals for meters; and idem-servlet would gain a dependency for forty lines.
 */
final class RetryShareWindow {
  static final int BUCKETS = 10;
  private static final long REQUEST = 1L;
  private static final long RETRY = (1L << 32) | REQUEST;
  private static final long LOW = 0xFFFF_FFFFL;

  private final double maxShare;
  private final int minRequests;
  private final long bucketNanos;
  private final LongSupplier nanos;
  private final AtomicReferenceArray<Bucket> ring = new AtomicReferenceArray<>(BUCKETS);
  private final LongAdder admittedTotal = new LongAdder();
  private final LongAdder shedTotal = new LongAdder();

  RetryShareWindow(double maxShare, int minRequests, long windowNanos, LongSupplier nanos) {
    this.maxShare = maxShare;
    this.minRequests = minRequests;
    this.bucketNanos = Math.max(1L, windowNanos / BUCKETS);
    this.nanos = nanos;
  }

  /** Counts a first attempt; first attempts are never refused. */
  void firstAttempt() {
    current(nanos.getAsLong()).counts.getAndAdd(REQUEST);
  }

  /**
   * Counts this retry and returns true if serving it keeps retries at or below the maximum share of the requests
   * served in the window (this one included), or if the window held fewer than {@code minRequests} served requests
   * before it; otherwise counts it as shed, not served, and returns false.
   */
  boolean tryAdmitRetry() {
    long now = nanos.getAsLong();
    Bucket bucket = current(now);
    bucket.counts.getAndAdd(RETRY);
    long epoch = Math.floorDiv(now, bucketNanos);
    long requests = 0;
    long retries = 0;
    for (int i = 0; i < BUCKETS; i++) {
      Bucket b = ring.get(i);
      if (b != null && inWindow(b, epoch)) {
        long v = b.counts.get();
        requests += v & LOW;
        retries += v >>> 32;
      }
    }
    if (requests > minRequests && retries > maxShare * requests + 1e-9) {
      bucket.counts.getAndAdd(-RETRY);
      bucket.shed.increment();
      shedTotal.increment();
      return false;
    }
    admittedTotal.increment();
    return true;
  }

  /** What the window holds now. */
  Snapshot snapshot() {
    long epoch = Math.floorDiv(nanos.getAsLong(), bucketNanos);
    long requests = 0;
    long retries = 0;
    long shed = 0;
    for (int i = 0; i < BUCKETS; i++) {
      Bucket b = ring.get(i);
      if (b != null && inWindow(b, epoch)) {
        long v = b.counts.get();
        requests += v & LOW;
        retries += v >>> 32;
        shed += b.shed.sum();
      }
    }
    return new Snapshot(requests, retries, shed);
  }

  long admittedTotal() {
    return admittedTotal.sum();
  }

  long shedTotal() {
    return shedTotal.sum();
  }

  private static boolean inWindow(Bucket b, long epoch) {
    return b.epoch > epoch - BUCKETS && b.epoch <= epoch;
  }

  /** The bucket for {@code now}, replacing the slot's bucket if it is older. Ends after at most a few rounds. */
  private Bucket current(long now) {
    long epoch = Math.floorDiv(now, bucketNanos);
    int slot = (int) Math.floorMod(epoch, (long) BUCKETS);
    while (true) {
      Bucket b = ring.get(slot);
      if (b != null && b.epoch >= epoch) {
        // the same bucket, or (a thread that read the clock a moment earlier) a newer one: count there
        return b;
      }
      Bucket fresh = new Bucket(epoch);
      if (ring.compareAndSet(slot, b, fresh)) {
        return fresh;
      }
    }
  }

  /** Served requests (first attempts and admitted retries), admitted retries, shed retries. */
  record Snapshot(long requests, long retries, long shed) {
    /** Admitted retries over served requests; 0 when nothing was served. */
    double retryShare() {
      return requests == 0 ? 0.0 : (double) retries / requests;
    }
  }

  private static final class Bucket {
    final long epoch;
    final AtomicLong counts = new AtomicLong();
    final LongAdder shed = new LongAdder();

    Bucket(long epoch) {
      this.epoch = epoch;
    }
  }
}
