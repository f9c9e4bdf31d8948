package dev.idem.outbox.consumer;

import dev.idem.outbox.InboxPayloadMismatchException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.spi.InboxStore;
import java.time.Duration;
import java.util.Objects;

/**
 * The one rule by which every inbox consumer (RabbitMQ, NATS, Kafka) answers its broker: a pure function from the
 * inbox's outcome, or the failure it threw, and what came before ({@link History}) to a {@link Decision}. Brokers
 * differ in how they carry a decision out, never in the decision. Immutable and thread-safe.
 *
 * <table>
 *   <caption>Outcome or failure, and the decision</caption>
 *   <tr><th>Outcome or failure</th><th>Reason</th><th>Decision</th></tr>
 *   <tr><td>processed and committed; a duplicate</td><td>{@code PROCESSED}, {@code DUPLICATE}</td><td>{@link
 *       Action#ACK}</td></tr>
 *   <tr><td>no id; an id the inbox cannot hold ({@link IllegalArgumentException} from the inbox); too large</td><td>
 *       {@code MISSING_ID}, {@code INVALID_ID}, {@code TOO_LARGE}</td><td>{@link Action#REJECT}: never
 *       retried</td></tr>
 *   <tr><td>the id was processed before with another payload</td><td>{@code PAYLOAD_MISMATCH}</td><td>{@link
 *       Action#DEAD_LETTER} at once, counted</td></tr>
 *   <tr><td>the message's own work failed</td><td>{@code HANDLER_FAILED}</td><td>{@link Action#RETRY} after the
 *       backoff of its attempt, counted; {@link Action#DEAD_LETTER} on attempt {@link #maxAttempts()}</td></tr>
 *   <tr><td>a passing conflict</td><td>{@code CONTENTION}</td><td>{@link Action#RETRY} without counting, up to
 *       {@link #maxUncountedContention()} times for one message; then as a failure of its work</td></tr>
 *   <tr><td>the database is away or refuses everyone's work</td><td>{@code DATABASE_DOWN}</td><td>{@link
 *       Action#PAUSE} after the backoff of the outages in a row; counted against no message, never given up</td></tr>
 * </table>
 *
 * <h2>Whose failure it is ({@link #classify})</h2>
 * <p>A payload mismatch is the message's; an {@link IllegalArgumentException} from the inbox is an id it cannot
 * hold. For everything else the inbox's store judges ({@link InboxStore#fault}): an outage is
 * {@code DATABASE_DOWN}, a passing conflict {@code CONTENTION}, anything else {@code HANDLER_FAILED}. The JDBC store
 * counts the inbox's own statements failing as the database's (a schema fault included, as it refuses every message
 * alike), except a conflict and an integrity or data error at the commit (the handler's writes); and a handler's SQL
 * failure as the database's only when the database refuses everyone's work, or lost the connection and fails a
 * health check too.
 *
 * <pre>{@code
 * ConsumerEngine engine = ConsumerEngine.builder().maxAttempts(5)
 *     .backoff(Duration.ofMillis(100), Duration.ofSeconds(30)).build();
 * Decision d = engine.failed(error, History.of(deliveries - 1).withOutages(outagesInARow), inbox.store());
 * switch (d.action()) { ... }
 * }</pre>
 */
public final class ConsumerEngine {
  /** {@link Builder#maxAttempts}: never give up on a message whose handler fails. */
  public static final int UNLIMITED = -1;


  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final int maxUncountedContention;

  private ConsumerEngine(Builder b) {
    this.maxAttempts = b.maxAttempts;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.maxUncountedContention = b.maxUncountedContention;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The attempt on which a message whose handler fails is given up on, or {@link #UNLIMITED}. */
  public int maxAttempts() {
    return maxAttempts;
  }

  public Duration initialBackoff() {
    return initialBackoff;
  }

  public Duration maxBackoff() {
    return maxBackoff;
  }

  /** How many passing conflicts of one message are retried without counting before they count. */
  public int maxUncountedContention() {
    return maxUncountedContention;
  }

  /** The inbox committed the message: {@link Action#ACK}, as {@code PROCESSED} or {@code DUPLICATE}. */
  public Decision processed(InboxResult result) {
    Objects.requireNonNull(result, "result");
    return new Decision(Action.ACK, result.duplicate() ? Reason.DUPLICATE : Reason.PROCESSED, Duration.ZERO, 0);
  }

  /**
   * The consumer refuses the message before the inbox sees it: {@link Action#REJECT}.
   *
   * @param reason {@code MISSING_ID}, {@code INVALID_ID} or {@code TOO_LARGE}
   */
  public Decision refused(Reason reason) {
    if (reason == null || !reason.isRefusal()) {
      throw new IllegalArgumentException("a refusal is MISSING_ID, INVALID_ID or TOO_LARGE, got " + reason);
    }
    return new Decision(Action.REJECT, reason, Duration.ZERO, 0);
  }

  /**
   * What to do after the inbox threw {@code error}: {@link #classify} then {@link #decide}.
   *
   * @param store the inbox's store, which judges its own failures
   */
  public Decision failed(Throwable error, History before, InboxStore store) {
    return decide(classify(error, store), before);
  }

  /**
   * The decision for a failure of kind {@code reason}.
   *
   * @param reason what {@link #classify} found, or a refusal
   * @param before what came before this failure
   */
  public Decision decide(Reason reason, History before) {
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(before, "before");
    int attempt = (int) Math.min(Integer.MAX_VALUE, before.failures() + 1L);
    switch (reason) {
      case PROCESSED:
      case DUPLICATE:
        throw new IllegalArgumentException(reason + " is no failure: use processed(result)");
      case MISSING_ID:
      case INVALID_ID:
      case TOO_LARGE:
        return refused(reason);
      case PAYLOAD_MISMATCH:
        return new Decision(Action.DEAD_LETTER, reason, Duration.ZERO, attempt);
      case DATABASE_DOWN:
        return new Decision(Action.PAUSE, reason, backoff(before.outages() + 1L), before.failures());
      case CONTENTION:
        if (before.contentions() < maxUncountedContention) {
          return new Decision(Action.RETRY, reason, backoff(before.contentions() + 1L), before.failures());
        }
        // always the same message: it is its work that cannot get through, not a passing conflict
        return handlerFailed(attempt);
      default:
        return handlerFailed(attempt);
    }
  }

  private Decision handlerFailed(int attempt) {
    if (maxAttempts != UNLIMITED && attempt >= maxAttempts) {
      return new Decision(Action.DEAD_LETTER, Reason.HANDLER_FAILED, Duration.ZERO, attempt);
    }
    return new Decision(Action.RETRY, Reason.HANDLER_FAILED, backoff(attempt), attempt);
  }

  /** The wait before try {@code n + 1} after the {@code n}-th failure: initial doubling up to the maximum. */
  public Duration backoff(long n) {
    long shift = Math.min(62, Math.max(0, n - 1));
    long initial = initialBackoff.toNanos();
    long max = maxBackoff.toNanos();
    if (initial == 0) {
      return Duration.ZERO;
    }
    long grown = initial > (max >> shift) ? max : initial << shift;
    return Duration.ofNanos(Math.min(grown, max));
  }

  /**
   * Whose failure {@code error} (thrown by the inbox's {@code process...}) is: see the class notes.
   *
   * @return {@code PAYLOAD_MISMATCH}, {@code INVALID_ID}, {@code HANDLER_FAILED}, {@code CONTENTION} or
   *     {@code DATABASE_DOWN}
   */
  public static Reason classify(Throwable error, InboxStore store) {
    Objects.requireNonNull(error, "error");
    Objects.requireNonNull(store, "store");
    if (error instanceof InboxPayloadMismatchException) {
      return Reason.PAYLOAD_MISMATCH;
    }
    if (error instanceof IllegalArgumentException) {
      return Reason.INVALID_ID; // the inbox refused its arguments itself; what a handler throws comes wrapped
    }
    switch (store.fault(error)) {
      case OUTAGE:
        return Reason.DATABASE_DOWN;
      case CONTENTION:
        return Reason.CONTENTION;
      default:
        return Reason.HANDLER_FAILED;
    }
  }

  @Override
  public String toString() {
    return "ConsumerEngine{maxAttempts=" + maxAttempts + ", backoff=" + initialBackoff.toMillis() + ".."
        + maxBackoff.toMillis() + " ms, maxUncountedContention=" + maxUncountedContention + '}';
  }

  /** Builds a {@link ConsumerEngine}. Mutable, not thread-safe. */
  public static final class Builder {
    private int maxAttempts = 5;
    private Duration initialBackoff = Duration.ofMillis(100);
    private Duration maxBackoff = Duration.ofSeconds(30);
    private int maxUncountedContention = 20;

    private Builder() {}

    /**
     * The attempt on which a message whose handler keeps failing is dead-lettered (default 5; {@link #UNLIMITED}:
     * never).
     */
    public Builder maxAttempts(int maxAttempts) {
      if (maxAttempts == 0 || maxAttempts < UNLIMITED) {
        throw new IllegalArgumentException("maxAttempts must be -1 (never give up) or positive, got " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * The wait after the n-th failure, or the n-th outage in a row: {@code initial * 2^(n-1)}, at most {@code max}
     * (default 100 ms and 30 s). Equal values wait alike every time; zero tries again at once.
     */
    public Builder backoff(Duration initial, Duration max) {
      if (initial == null || max == null || initial.isNegative() || max.compareTo(initial) < 0
          || max.compareTo(Duration.ofHours(1)) > 0) {
        throw new IllegalArgumentException("backoff needs 0 <= initial <= max <= 1 h, got " + initial + " and " + max);
      }
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    /** Passing conflicts of one message retried without counting before they count (default 20, 0 to 1000). */
    public Builder maxUncountedContention(int n) {
      if (n < 0 || n > 1000) {
        throw new IllegalArgumentException("maxUncountedContention must be 0 to 1000, got " + n);
      }
      this.maxUncountedContention = n;
      return this;
    }

    public ConsumerEngine build() {
      return new ConsumerEngine(this);
    }
  }
}
