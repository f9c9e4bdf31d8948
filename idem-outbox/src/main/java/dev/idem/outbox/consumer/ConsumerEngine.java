package dev.idem.outbox.consumer;

import dev.idem.core.StoreException;
import dev.idem.outbox.InboxPayloadMismatchException;
import dev.idem.outbox.InboxResult;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.function.BooleanSupplier;

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
 * <ul>
 *   <li>A {@link StoreException} comes from the inbox's own statements or from the commit (a handler's failures come
 *       wrapped in an {@code InboxHandlerException}). The inbox checked ids and sizes before writing, so it is the
 *       database's: {@code DATABASE_DOWN}, a schema fault ({@link StoreException#isSchemaFault()}, e.g. a missing
 *       table) included, as it refuses every message alike and no message should be given up on for it. Two
 *       exceptions: a deadlock, a serialization failure or a lock timeout ({@link StoreException#isLockTimeout()}) is
 *       {@code CONTENTION}; an integrity or data error at the commit (SQLState classes 23 and 22, e.g. a deferred
 *       constraint) is the handler's writes failing: {@code HANDLER_FAILED}.</li>
 *   <li>A failure with an {@link SQLException} in its causes (the handler's SQL) is {@code DATABASE_DOWN} when its
 *       SQLState or error code is one by which a database refuses everyone's work ({@link #refusesEveryone}: read-only
 *       after a failover, missing privileges or tables, full disks, too many connections, a shutdown);
 *       {@code CONTENTION} for a deadlock, a serialization failure or a lock timeout; for a lost connection it is
 *       {@code DATABASE_DOWN} only when the database does not answer a health check either (the
 *       {@code databaseAnswers} probe, for example {@code inbox.store()::available}), {@code HANDLER_FAILED} otherwise.
 *       Any other SQL failure, a statement timeout included, is {@code HANDLER_FAILED}.</li>
 *   <li>Anything else the handler threw, {@link Error}s included, is {@code HANDLER_FAILED}.</li>
 * </ul>
 *
 * <pre>{@code
 * ConsumerEngine engine = ConsumerEngine.builder().maxAttempts(5)
 *     .backoff(Duration.ofMillis(100), Duration.ofSeconds(30)).build();
 * Decision d = engine.failed(error, History.of(deliveries - 1).withOutages(outagesInARow), databaseAnswers);
 * switch (d.action()) { ... }
 * }</pre>
 */
public final class ConsumerEngine {
  /** {@link Builder#maxAttempts}: never give up on a message whose handler fails. */
  public static final int UNLIMITED = -1;

  private static final Set<String> REFUSES_EVERYONE_STATES =
      Set.of("25006", "42501", "42P01", "3D000", "57P01", "57P02", "57P03");
  private static final Set<Integer> REFUSES_EVERYONE_CODES =
      Set.of(1290, 1036, 1021, 1114, 1040, 1044, 1045, 1142, 1146);
  private static final Set<String> CONTENTION_STATES = Set.of("40001", "40P01", "55P03");
  private static final Set<Integer> CONTENTION_CODES = Set.of(1213, 1205);

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
   * @param databaseAnswers asked only for a lost connection in the handler's SQL: whether the database answers now
   */
  public Decision failed(Throwable error, History before, BooleanSupplier databaseAnswers) {
    return decide(classify(error, databaseAnswers), before);
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
   * Whose failure {@code error} (thrown by the inbox's {@code process...AndCommit}) is: see the class notes.
   *
   * @param databaseAnswers asked only for a lost connection in the handler's SQL; true when the database answers now
   * @return {@code PAYLOAD_MISMATCH}, {@code INVALID_ID}, {@code HANDLER_FAILED}, {@code CONTENTION} or
   *     {@code DATABASE_DOWN}
   */
  public static Reason classify(Throwable error, BooleanSupplier databaseAnswers) {
    Objects.requireNonNull(error, "error");
    Objects.requireNonNull(databaseAnswers, "databaseAnswers");
    if (error instanceof InboxPayloadMismatchException) {
      return Reason.PAYLOAD_MISMATCH;
    }
    if (error instanceof IllegalArgumentException) {
      return Reason.INVALID_ID; // the inbox refused its arguments itself; what a handler throws comes wrapped
    }
    SQLException q = firstSqlException(error);
    if (error instanceof StoreException s) {
      return ofStore(s, q);
    }
    if (q == null) {
      return Reason.HANDLER_FAILED;
    }
    String state = q.getSQLState() == null ? "" : q.getSQLState();
    int code = q.getErrorCode();
    if (refusesEveryone(state, code)) {
      return Reason.DATABASE_DOWN;
    }
    if (q instanceof SQLTransactionRollbackException || isContention(state, code)) {
      return Reason.CONTENTION;
    }
    if (isConnectionFailure(q, state)) {
      return databaseAnswers.getAsBoolean() ? Reason.HANDLER_FAILED : Reason.DATABASE_DOWN;
    }
    return Reason.HANDLER_FAILED;
  }

  private static Reason ofStore(StoreException s, SQLException q) {
    String state = s.sqlState() != null ? s.sqlState() : q != null && q.getSQLState() != null ? q.getSQLState() : "";
    int code = q == null ? 0 : q.getErrorCode();
    if (s.isLockTimeout() || q instanceof SQLTransactionRollbackException || isContention(state, code)) {
      return Reason.CONTENTION;
    }
    if (state.startsWith("23") || state.startsWith("22")) {
      return Reason.HANDLER_FAILED; // the handler's writes, refused at the commit (a deferred constraint)
    }
    return Reason.DATABASE_DOWN;
  }

  /**
   * Whether {@code state} or {@code code} is one by which a database refuses every transaction alike: SQLStates
   * (PostgreSQL: read-only, insufficient privilege, undefined table, invalid catalog, shutdowns; the classes 28
   * authorization, 53 resources, 58 system errors) and error codes (MariaDB: read-only, read-only table, disk full,
   * table full, too many connections, access denied, missing table).
   */
  public static boolean refusesEveryone(String state, int code) {
    String s = state == null ? "" : state;
    return REFUSES_EVERYONE_STATES.contains(s) || s.startsWith("28") || s.startsWith("53") || s.startsWith("58")
        || REFUSES_EVERYONE_CODES.contains(code);
  }

  private static boolean isContention(String state, int code) {
    return CONTENTION_STATES.contains(state) || CONTENTION_CODES.contains(code);
  }

  private static boolean isConnectionFailure(SQLException q, String state) {
    return q instanceof SQLTransientConnectionException || q instanceof SQLNonTransientConnectionException
        || q instanceof SQLRecoverableException || state.startsWith("08");
  }

  private static SQLException firstSqlException(Throwable error) {
    int depth = 0;
    for (Throwable t = error; t != null && depth < 64; t = t.getCause() == t ? null : t.getCause(), depth++) {
      if (t instanceof SQLException q) {
        return q;
      }
    }
    return null;
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
