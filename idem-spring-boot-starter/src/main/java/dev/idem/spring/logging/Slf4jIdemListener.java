package dev.idem.spring.logging;

import dev.idem.core.AuditEntry;
import dev.idem.core.Execution;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.LoggingListener;
import dev.idem.core.PayloadMismatchException;
import dev.idem.core.Reconciler;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.core.spi.IdemListener;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes what the executor and the completer do through SLF4J (logger {@code dev.idem}, as core's
 * {@link LoggingListener}, which it replaces in Spring applications), with the MDC keys of {@link IdemMdc}: every
 * line sets {@code idempotency_key}, {@code scope} and {@code operation}; a transition also {@code from_state} and
 * {@code to_state} (the message reads {@code FROM -> TO}, {@code ABSENT} for no record); a payload mismatch or an
 * in-progress conflict {@code error_code}. {@code attempt} comes from the request's MDC
 * ({@link IdemMdcFilter}) and is left as it is. The MDC is restored after each line, so a line's keys never leak into
 * the next one. The messages carry the key, the scope and the operation too, for log patterns without the MDC.
 * Request bodies, stored responses and credentials are never logged, and neither is an exception's message (which
 * may carry any of them, from the application's phases or a driver): an exception is named by its class, and a
 * failed recovery's stack trace is logged with the classes and frames of the exception and of its causes, without
 * their messages. Thread-safe.
 *
 * <p>Levels: executions and transitions at DEBUG, except a payload mismatch (a client reusing a key for another
 * request) and an expired key (a client retrying after the answer's TTL) at INFO; lease expiries and recoveries at
 * INFO; a failed recovery at WARN.
 */
public final class Slf4jIdemListener implements IdemListener {
  /** The problem code of a payload mismatch, as the HTTP contract answers it. */
  public static final String PAYLOAD_MISMATCH_CODE = ProblemCode.PAYLOAD_MISMATCH.code();
  /** The problem code of a request whose key is in progress. */
  public static final String IN_PROGRESS_CODE = ProblemCode.IN_PROGRESS.code();
  /** The problem code of a retry whose key expired but is retained. */
  public static final String KEY_EXPIRED_CODE = ProblemCode.KEY_EXPIRED.code();
  /** The problem code of a request whose record is uncertain. */
  public static final String OUTCOME_UNCERTAIN_CODE = ProblemCode.OUTCOME_UNCERTAIN.code();

  private final Logger log;

  /** Logs to {@code dev.idem}. */
  public Slf4jIdemListener() {
    this(LoggerFactory.getLogger("dev.idem"));
  }

  /** Logs to {@code log}. */
  public Slf4jIdemListener(Logger log) {
    this.log = log;
  }

  private static String where(String instance, RecordKey key) {
    return "idem '" + instance + "' " + key.operation() + " scope=" + key.scope() + " idempotency_key=" + key.key();
  }

  private static IdemMdc.Frame mdc(RecordKey key, String... more) {
    String[] all = new String[6 + more.length];
    all[0] = IdemMdc.IDEMPOTENCY_KEY;
    all[1] = key.key().value();
    all[2] = IdemMdc.SCOPE;
    all[3] = key.scope().value();
    all[4] = IdemMdc.OPERATION;
    all[5] = key.operation().name();
    System.arraycopy(more, 0, all, 6, more.length);
    return IdemMdc.set(all);
  }

  /** An execution ended: its outcome, at DEBUG (a payload mismatch or an expired key at INFO). */
  @Override
  public void onExecution(String instance, Execution execution, Duration elapsed) {
    boolean mismatch = execution.outcome() == Execution.Outcome.PAYLOAD_MISMATCH;
    boolean expired = execution.outcome() == Execution.Outcome.KEY_EXPIRED;
    boolean uncertain = execution.outcome() == Execution.Outcome.UNCERTAIN;
    boolean info = mismatch || expired || uncertain;
    if (info ? !log.isInfoEnabled() : !log.isDebugEnabled()) {
      return;
    }
    String code = mismatch ? PAYLOAD_MISMATCH_CODE : expired ? KEY_EXPIRED_CODE : uncertain ? OUTCOME_UNCERTAIN_CODE
        : execution.outcome() == Execution.Outcome.IN_PROGRESS ? IN_PROGRESS_CODE : null;
    String line = where(instance, execution.key()) + " outcome=" + execution.outcome()
        + (execution.response() == null ? "" : " status=" + execution.response().status())
        + (mismatch && !execution.differingFields().isEmpty()
            ? " differing_fields=" + PayloadMismatchException.printable(execution.differingFields()) : "")
        + (execution.keyAge() == null || execution.keyAge().isZero() ? ""
            : " key_age_ms=" + execution.keyAge().toMillis())
        + " elapsed_us=" + elapsed.toNanos() / 1000;
    IdemMdc.Frame frame = mdc(execution.key(), IdemMdc.ERROR_CODE, code);
    try {
      if (info) {
        log.info(line);
      } else {
        log.debug(line);
      }
    } finally {
      frame.close();
    }
  }

  /** A record moved between states: {@code FROM -> TO}, at DEBUG. */
  @Override
  public void onTransition(String instance, RecordKey key, RecordState from, RecordState to, String phase) {
    if (!log.isDebugEnabled()) {
      return;
    }
    String fromName = name(from);
    String toName = name(to);
    IdemMdc.Frame frame = mdc(key, IdemMdc.FROM_STATE, fromName, IdemMdc.TO_STATE, toName);
    try {
      log.debug(where(instance, key) + " " + fromName + " -> " + toName + (phase == null ? "" : " phase=" + phase));
    } finally {
      frame.close();
    }
  }

  /** A key was released for a retry, at DEBUG; an exception is named by its class only. */
  @Override
  public void onReleased(String instance, RecordKey key, Throwable cause) {
    if (!log.isDebugEnabled()) {
      return;
    }
    IdemMdc.Frame frame = mdc(key);
    try {
      log.debug(where(instance, key) + " released"
          + (cause == null ? " (an answer that is not kept)" : " error=" + cause.getClass().getName()));
    } finally {
      frame.close();
    }
  }

  /** An expired lease was taken over, at INFO. */
  @Override
  public void onLeaseExpired(String instance, IdempotencyRecord expired) {
    if (!log.isInfoEnabled()) {
      return;
    }
    IdemMdc.Frame frame = mdc(expired.key());
    try {
      String lease = expired.leaseOwner() == null ? " released lease" : " lease of '" + expired.leaseOwner() + "'";
      log.info(where(instance, expired.key()) + lease + " expired at " + expired.lockedUntil()
          + "; taken over from recovery_point=" + expired.recoveryPoint());
    } finally {
      frame.close();
    }
  }

  /**
   * The completer finished a record (INFO), or could not and will try again (WARN, with the failure's class and,
   * messages left out, its stack trace).
   */
  @Override
  public void onCompleterRecovery(String instance, RecordKey key, boolean recovered, Throwable failure) {
    IdemMdc.Frame frame = mdc(key);
    try {
      if (recovered) {
        log.info(where(instance, key) + " completer recovered the record");
      } else if (failure == null) {
        log.warn(where(instance, key) + " completer could not finish the record");
      } else {
        log.warn(where(instance, key) + " completer could not finish the record error="
            + failure.getClass().getName(), RedactedException.of(failure));
      }
    } finally {
      frame.close();
    }
  }

  /** A record became uncertain, at WARN: an operator or a reconciler has to decide it. */
  @Override
  public void onUncertain(String instance, IdempotencyRecord record, Throwable cause) {
    IdemMdc.Frame frame = mdc(record.key(), IdemMdc.FROM_STATE, "IN_PROGRESS", IdemMdc.TO_STATE, "UNCERTAIN");
    try {
      log.warn(where(instance, record.key()) + " became UNCERTAIN after " + record.resumeAttempts()
          + " failed resumptions from recovery_point=" + record.recoveryPoint()
          + "; it waits for a reconciler or an operator" + (cause == null ? "" : " error=" + cause.getClass().getName()));
    } finally {
      frame.close();
    }
  }

  /** A reconciler answered, at INFO (WARN when it threw, with the failure's class only). */
  @Override
  public void onReconciled(String instance, RecordKey key, Reconciler.Verdict.Result result, boolean applied,
      Throwable failure) {
    IdemMdc.Frame frame = mdc(key);
    try {
      if (failure != null) {
        log.warn(where(instance, key) + " reconciler failed; the record stays UNCERTAIN error="
            + failure.getClass().getName());
      } else {
        log.info(where(instance, key) + " reconciler answered " + result
            + (applied ? " (applied)" : " (not applied)"));
      }
    } finally {
      frame.close();
    }
  }

  /** An operator resolved an uncertain record, at INFO: who, what, from and to, and why. */
  @Override
  public void onResolved(String instance, AuditEntry entry) {
    IdemMdc.Frame frame = mdc(entry.key(), IdemMdc.FROM_STATE, entry.from().name(), IdemMdc.TO_STATE,
        entry.to().name());
    try {
      log.info(where(instance, entry.key()) + " resolved by '" + entry.actor() + "': " + entry.action() + " "
          + entry.from() + " -> " + entry.to() + " reason=\"" + entry.reason() + "\"");
    } finally {
      frame.close();
    }
  }

  @Override
  public void onRecordUnreadable(String store, RecordKey key, DecryptionException failure) {
    IdemMdc.Frame frame = mdc(key);
    try {
      log.error("store '" + store + "' " + key + ": kept answer cannot be opened, reason=" + failure.reason()
          + " key_id=" + failure.keyId() + "; nothing was run again");
    } finally {
      frame.close();
    }
  }

  /**
   * A copy of an exception for the log: the class name of the original (and the SQLState of an
   * {@link SQLException}) in place of its message, its stack frames, and its causes and suppressed exceptions copied
   * the same way; never a message.
   */
  static final class RedactedException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private static final int MAX_DEPTH = 32;

    private RedactedException(String description) {
      super(description);
    }

    static RedactedException of(Throwable failure) {
      return copy(failure, Collections.newSetFromMap(new IdentityHashMap<>()), 0);
    }

    private static RedactedException copy(Throwable original, Set<Throwable> seen, int depth) {
      seen.add(original);
      String state = original instanceof SQLException sql && sql.getSQLState() != null
          ? " (SQLState " + sql.getSQLState() + ")" : "";
      RedactedException copy = new RedactedException(original.getClass().getName() + state);
      copy.setStackTrace(original.getStackTrace());
      if (depth < MAX_DEPTH) {
        Throwable cause = original.getCause();
        if (cause != null && !seen.contains(cause)) {
          copy.initCause(copy(cause, seen, depth + 1));
        }
        for (Throwable suppressed : original.getSuppressed()) {
          if (!seen.contains(suppressed)) {
            copy.addSuppressed(copy(suppressed, seen, depth + 1));
          }
        }
      }
      return copy;
    }

    /** The original's class name, as the log's first line of the exception. */
    @Override
    public String toString() {
      return getMessage();
    }
  }

  private static String name(RecordState state) {
    return state == null ? "ABSENT" : state.name();
  }

  @Override
  public String toString() {
    return "Slf4jIdemListener[" + log.getName() + "]";
  }
}
