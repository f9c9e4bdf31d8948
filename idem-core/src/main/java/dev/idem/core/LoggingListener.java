package dev.idem.core;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.spi.IdemListener;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;

/**
 * Writes what the executor and the completer do to {@link System.Logger} ({@code dev.idem}), which SLF4J, Log4j and
 * java.util.logging can all receive. Each line carries {@code idempotency_key}, {@code scope}, {@code operation}
 * and, for transitions, {@code from_state -> to_state}. Requests' bodies and stored responses are never logged.
 * Thread-safe.
 *
 * <p>Levels: executions and transitions at DEBUG, lease expiries and recoveries at INFO, failed recoveries at
 * WARNING.
 */
public final class LoggingListener implements IdemListener {
  private final Logger log;

  public LoggingListener() {
    this(System.getLogger("dev.idem"));
  }

  public LoggingListener(Logger log) {
    this.log = log;
  }

  private static String where(String instance, RecordKey key) {
    return "idem '" + instance + "' idempotency_key=" + key.key() + " scope=" + key.scope() + " operation="
        + key.operation();
  }

  @Override
  public void onExecution(String instance, Execution execution, Duration elapsed) {
    if (log.isLoggable(Level.DEBUG)) {
      log.log(Level.DEBUG, where(instance, execution.key()) + " outcome=" + execution.outcome()
          + (execution.response() == null ? "" : " status=" + execution.response().status())
          + (execution.keyAge() == null || execution.keyAge().isZero() ? "" : " key_age_ms="
              + execution.keyAge().toMillis())
          + " elapsed_us=" + elapsed.toNanos() / 1000);
    }
  }

  @Override
  public void onTransition(String instance, RecordKey key, RecordState from, RecordState to, String phase) {
    if (log.isLoggable(Level.DEBUG)) {
      log.log(Level.DEBUG, where(instance, key) + " " + name(from) + " -> " + name(to)
          + (phase == null ? "" : " phase=" + phase));
    }
  }

  @Override
  public void onReleased(String instance, RecordKey key, Throwable cause) {
    if (log.isLoggable(Level.DEBUG)) {
      log.log(Level.DEBUG, where(instance, key) + " released"
          + (cause == null ? " (transient answer)" : " error=" + cause.getClass().getName()));
    }
  }

  @Override
  public void onLeaseExpired(String instance, IdempotencyRecord expired) {
    String lease = expired.leaseOwner() == null ? " released lease" : " lease of '" + expired.leaseOwner() + "'";
    log.log(Level.INFO, where(instance, expired.key()) + lease + " expired at " + expired.lockedUntil()
        + "; taken over from recovery_point=" + expired.recoveryPoint());
  }

  @Override
  public void onCompleterRecovery(String instance, RecordKey key, boolean recovered, Throwable failure) {
    if (recovered) {
      log.log(Level.INFO, where(instance, key) + " completer recovered the record");
    } else {
      log.log(Level.WARNING, where(instance, key) + " completer could not finish the record"
          + (failure == null ? "" : ": " + failure), failure);
    }
  }

  @Override
  public void onUncertain(String instance, IdempotencyRecord record, Throwable cause) {
    log.log(Level.WARNING, where(instance, record.key()) + " IN_PROGRESS -> UNCERTAIN after "
        + record.resumeAttempts() + " failed resumptions from recovery_point=" + record.recoveryPoint()
        + "; it waits for a reconciler or an operator" + (cause == null ? "" : ": " + cause));
  }

  @Override
  public void onReconciled(String instance, RecordKey key, Reconciler.Verdict.Result result, boolean applied,
      Throwable failure) {
    if (failure != null) {
      log.log(Level.WARNING, where(instance, key) + " reconciler failed; the record stays UNCERTAIN: " + failure,
          failure);
    } else {
      log.log(Level.INFO, where(instance, key) + " reconciler answered " + result
          + (applied ? "" : result == Reconciler.Verdict.Result.UNKNOWN ? "; the record stays UNCERTAIN"
              : "; another worker decided the record first"));
    }
  }

  @Override
  public void onResolved(String instance, AuditEntry entry) {
    log.log(Level.INFO, where(instance, entry.key()) + " resolved by '" + entry.actor() + "': " + entry.action()
        + " " + entry.from() + " -> " + entry.to() + " reason=\"" + entry.reason() + "\"");
  }

  private static String name(RecordState state) {
    return state == null ? "ABSENT" : state.name();
  }

  @Override
  public void onRecordUnreadable(String store, RecordKey key, DecryptionException failure) {
    log.log(Level.ERROR, "store '" + store + "' " + key + ": kept answer cannot be opened, reason=" + failure.reason()
        + " key_id=" + failure.keyId() + "; nothing was run again");
  }
}
