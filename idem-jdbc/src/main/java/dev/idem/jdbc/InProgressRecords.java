package dev.idem.jdbc;

import java.time.Duration;
import java.time.Instant;

/**
 * What a store's in-progress records look like at one instant, for operators and gauges: how many there are, how
 * many wait for the completer because their lease has run out, and how long the oldest has been in progress. Read
 * with {@link JdbcIdempotencyStore#inProgress(Instant)}. Immutable.
 *
 * @param count records in progress
 * @param leaseExpired those among them whose lease had ended at the instant of the read (or that hold none): the
 *     completer, or a client's retry, will take them over
 * @param oldestCreatedAt when the oldest in-progress record was claimed, or {@code null} when there is none
 * @param earliestLeaseEnd the earliest end of a lease among them, or {@code null} when there is none
 * @param uncertain records that are uncertain (not counted in {@code count}): their outside effect could not be
 *     confirmed, and they wait for a reconciler or an operator
 */
public record InProgressRecords(long count, long leaseExpired, Instant oldestCreatedAt, Instant earliestLeaseEnd,
    long uncertain) {
  /** No record in progress, none uncertain. */
  public static final InProgressRecords NONE = new InProgressRecords(0, 0, null, null, 0);

  /** Figures without uncertain records. */
  public InProgressRecords(long count, long leaseExpired, Instant oldestCreatedAt, Instant earliestLeaseEnd) {
    this(count, leaseExpired, oldestCreatedAt, earliestLeaseEnd, 0);
  }

  /** Checks that the figures fit together. */
  public InProgressRecords {
    if (count < 0 || leaseExpired < 0 || leaseExpired > count || uncertain < 0) {
      throw new IllegalArgumentException("need 0 <= leaseExpired <= count and 0 <= uncertain, got leaseExpired "
          + leaseExpired + " of " + count + ", uncertain " + uncertain);
    }
    if ((count == 0) != (oldestCreatedAt == null)) {
      throw new IllegalArgumentException("oldestCreatedAt is set exactly when count > 0; count " + count
          + ", oldestCreatedAt " + oldestCreatedAt);
    }
  }

  /**
   * How long the oldest in-progress record has been in progress at {@code now}: zero when there is none (or when
   * {@code now} is before its claim, as a clock step back can make it).
   */
  public Duration oldestAge(Instant now) {
    if (oldestCreatedAt == null || !now.isAfter(oldestCreatedAt)) {
      return Duration.ZERO;
    }
    return Duration.between(oldestCreatedAt, now);
  }
}
