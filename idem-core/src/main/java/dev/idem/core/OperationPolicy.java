package dev.idem.core;

import dev.idem.core.fingerprint.FingerprintPolicy;
import java.time.Duration;
import java.util.Objects;

/**
 * How one operation is made idempotent: record lifetime, lease, what is kept, what an in-flight duplicate gets,
 * which parts of the request the fingerprint covers, and bounds. Immutable and thread-safe; built with
 * {@link #builder()}, which validates every value eagerly.
 */
public final class OperationPolicy {
  private static final OperationPolicy DEFAULTS = builder().build();

  private final Duration ttl;
  private final Duration retention;
  private final Duration lease;
  private final KeepPolicy keep;
  private final Duration inFlightWait;
  private final FingerprintPolicy fingerprint;
  private final int maxResponseBytes;
  private final boolean lookupFirst;
  private final int resumeCapAttempts;
  private final Duration resumeCapAge;

  private OperationPolicy(Builder b) {
    this.ttl = b.ttl;
    this.retention = b.retention;
    this.lease = b.lease;
    this.keep = b.keep;
    this.inFlightWait = b.inFlightWait;
    this.fingerprint = b.fingerprint;
    this.maxResponseBytes = b.maxResponseBytes;
    this.lookupFirst = b.lookupFirst;
    this.resumeCapAttempts = b.resumeCapAttempts;
    this.resumeCapAge = b.resumeCapAge;
  }

  /**
   * TTL 24 h, retention 30 days past the TTL, lease 30 s, default keep policy, reject in-flight duplicates, 1 MiB
   * responses, resume cap of 10 failed resumptions or 24 h.
   */
  public static OperationPolicy ofDefaults() {
    return DEFAULTS;
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.ttl = ttl;
    b.retention = retention;
    b.lease = lease;
    b.keep = keep;
    b.inFlightWait = inFlightWait;
    b.fingerprint = fingerprint;
    b.maxResponseBytes = maxResponseBytes;
    b.lookupFirst = lookupFirst;
    b.resumeCapAttempts = resumeCapAttempts;
    b.resumeCapAge = resumeCapAge;
    return b;
  }

  /**
   * How long a record answers retries (replay, mismatch, in progress). After it a final record becomes a tombstone for
   * the {@link #retention()}: the same request is refused as {@code key_expired}, another one is a mismatch, and only
   * after the retention is the key free again. With a retention of {@link Duration#ZERO} (and for records written
   * before retention existed) the key is free at the TTL. An in-progress record keeps its own rules: one with
   * committed phases never expires, one without counts as absent once the TTL has passed and its lease has ended.
   */
  public Duration ttl() {
    return ttl;
  }

  /**
   * How long past the {@link #ttl()} the key stays taken: the record becomes a tombstone (its response dropped, its
   * key, fingerprint hash and outcome kept), and a retry with the same key and request is refused as
   * {@code key_expired} instead of running again; a retry with another request is still a mismatch. After the
   * retention the key is free. {@link Duration#ZERO} keeps no tombstone: the key is free at the TTL.
   */
  public Duration retention() {
    return retention;
  }

  /** How long a worker holds an in-progress record before another worker (or the completer) may take it over. */
  public Duration lease() {
    return lease;
  }

  public KeepPolicy keep() {
    return keep;
  }

  /**
   * How long a duplicate that finds the record in progress waits for it to finish before it gets the in-progress
   * answer. {@link Duration#ZERO} (the default) answers at once. The wait is timed on {@link System#nanoTime()}, so a
   * step of the wall clock neither stretches nor cuts it; the wall clock only says whether the lease has ended.
   */
  public Duration inFlightWait() {
    return inFlightWait;
  }

  public FingerprintPolicy fingerprint() {
    return fingerprint;
  }

  /**
   * The largest response (body plus headers) that may be kept; a larger one is never stored, and the execution ends
   * with a {@link ResponseTooLargeException}. Where the work can be undone (atomic mode, a phased operation's first
   * phase or a later transactional phase) it is rolled back and the key is freed or the record stays at its recovery
   * point. Where it cannot (leased work, a phased outside phase that answers) the work took effect: the record ends
   * {@link RecordState#FAILED} with a small substitute answer ({@link ResponseTooLargeException#substitute}) that
   * every retry replays. See docs/modes.md, "Answers over maxResponseBytes".
   */
  public int maxResponseBytes() {
    return maxResponseBytes;
  }

  /**
   * Atomic and phased modes on a transactional store: whether the record is looked up (one read, outside any
   * transaction) before the work (atomic mode) or the first phase (phased mode) runs. On (the default), a duplicate
   * arriving after the first committed replays for the price of one primary-key read. Off, a first execution saves
   * that read, and a duplicate is found only when its record insert collides at the end of that transaction: it then
   * has done that transaction's work for nothing, rolls it back and replays (or, in phased mode, answers as the
   * record in flight says). Either way exactly one execution commits; see docs/design-decisions.md.
   */
  public boolean lookupFirst() {
    return lookupFirst;
  }

  /**
   * Phased mode: how many resumptions of a record (by a client's retry or the completer) may fail before the record
   * becomes {@link RecordState#UNCERTAIN}: its outside effect could not be confirmed, so it is never resumed blindly
   * again, and a {@link Reconciler} or an operator decides it. Default 10.
   */
  public int resumeCapAttempts() {
    return resumeCapAttempts;
  }

  /**
   * Phased mode: how old a record (from its claim) may be when a resumption fails before it becomes
   * {@link RecordState#UNCERTAIN}, whatever the count of {@link #resumeCapAttempts()}. Default 24 h.
   */
  public Duration resumeCapAge() {
    return resumeCapAge;
  }

  @Override
  public String toString() {
    return "OperationPolicy[ttl=" + ttl + ", retention=" + retention + ", lease=" + lease + ", inFlightWait="
        + inFlightWait + ", maxResponseBytes=" + maxResponseBytes + ", lookupFirst=" + lookupFirst
        + ", resumeCap=" + resumeCapAttempts + " attempts or " + resumeCapAge + "]";
  }

  /** Mutable, not thread-safe. Each setter validates its value at once. */
  public static final class Builder {
    private Duration ttl = Duration.ofHours(24);
    private Duration retention = Duration.ofDays(30);
    private Duration lease = Duration.ofSeconds(30);
    private KeepPolicy keep = KeepPolicy.ofDefaults();
    private Duration inFlightWait = Duration.ZERO;
    private FingerprintPolicy fingerprint = FingerprintPolicy.ofDefaults();
    private int maxResponseBytes = 1 << 20;
    private boolean lookupFirst = true;
    private int resumeCapAttempts = 10;
    private Duration resumeCapAge = Duration.ofHours(24);

    private Builder() {}

    public Builder ttl(Duration ttl) {
      this.ttl = positive("ttl", ttl);
      return this;
    }

    /**
     * See {@link OperationPolicy#retention()}: not negative; {@link Duration#ZERO} turns tombstones off. Default 30
     * days.
     */
    public Builder retention(Duration retention) {
      Objects.requireNonNull(retention, "retention");
      if (retention.isNegative()) {
        throw new IllegalArgumentException("retention must not be negative, got " + retention);
      }
      this.retention = retention;
      return this;
    }

    public Builder lease(Duration lease) {
      this.lease = positive("lease", lease);
      return this;
    }

    public Builder keep(KeepPolicy keep) {
      this.keep = Objects.requireNonNull(keep, "keep");
      return this;
    }

    /** Reject in-flight duplicates at once (the default). */
    public Builder rejectInFlight() {
      this.inFlightWait = Duration.ZERO;
      return this;
    }

    /** Let an in-flight duplicate wait up to {@code bound} for the first to finish, then replay it. */
    public Builder waitInFlight(Duration bound) {
      this.inFlightWait = positive("inFlightWait", bound);
      return this;
    }

    public Builder fingerprint(FingerprintPolicy fingerprint) {
      this.fingerprint = Objects.requireNonNull(fingerprint, "fingerprint");
      return this;
    }

    public Builder maxResponseBytes(int maxResponseBytes) {
      if (maxResponseBytes < 1) {
        throw new IllegalArgumentException("maxResponseBytes must be positive, got " + maxResponseBytes);
      }
      this.maxResponseBytes = maxResponseBytes;
      return this;
    }

    /** See {@link OperationPolicy#lookupFirst()}. */
    public Builder lookupFirst(boolean lookupFirst) {
      this.lookupFirst = lookupFirst;
      return this;
    }

    /**
     * See {@link OperationPolicy#resumeCapAttempts()} and {@link OperationPolicy#resumeCapAge()}: a phased record
     * becomes uncertain when a resumption fails for the {@code attempts}-th time (1 to 1000), or when it fails and the
     * record is at least {@code maxAge} old (positive). Default 10 attempts or 24 h.
     */
    public Builder resumeCap(int attempts, Duration maxAge) {
      if (attempts < 1 || attempts > 1000) {
        throw new IllegalArgumentException("resumeCap attempts must be 1..1000, got " + attempts);
      }
      this.resumeCapAge = positive("resumeCap maxAge", maxAge);
      this.resumeCapAttempts = attempts;
      return this;
    }

    public OperationPolicy build() {
      if (lease.compareTo(ttl) >= 0) {
        throw new IllegalArgumentException("lease " + lease + " must be shorter than ttl " + ttl);
      }
      return new OperationPolicy(this);
    }

    private static Duration positive(String name, Duration d) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, got " + d);
      }
      return d;
    }
  }
}
