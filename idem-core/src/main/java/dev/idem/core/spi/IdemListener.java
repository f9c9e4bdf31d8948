package dev.idem.core.spi;

import dev.idem.core.AuditEntry;
import dev.idem.core.Execution;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Reconciler;
import dev.idem.core.crypto.DecryptionException;
import java.time.Duration;

/**
 * Receives what the executor, completer and stores do, for meters and logs (docs/architecture.md#observability). Every
 * method has a no-op default. Called synchronously on the executing thread: implementations must be fast,
 * thread-safe and must not throw (an exception from a listener is caught and dropped).
 *
 * <p>Keys reach listeners so that logs can carry them; meter tags must not use them (unbounded cardinality).
 */
public interface IdemListener {
  /** A listener that does nothing. */
  IdemListener NOOP = new IdemListener() {};

  /**
   * An execution ended with a decision.
   *
   * @param instance the name of the {@code Idem} instance
   * @param execution the decision; {@link Execution#keyAge()} gives the key age at replay
   * @param elapsed how long the execution took
   */
  default void onExecution(String instance, Execution execution, Duration elapsed) {}

  /**
   * A record moved between states. {@code null} stands for absent (a claim starts from it, a release ends in it).
   */
  default void onTransition(String instance, RecordKey key, RecordState from, RecordState to, String phase) {}

  /** A worker's exception released the key (or the lease) so that a retry can run; the cause is given. */
  default void onReleased(String instance, RecordKey key, Throwable cause) {}

  /** An in-progress record's lease had expired and a worker (a retry or the completer) took it over. */
  default void onLeaseExpired(String instance, IdempotencyRecord expired) {}

  /**
   * The completer drove an expired record forward: to a final state ({@code recovered}), or it failed and the
   * record waits for the next round.
   */
  default void onCompleterRecovery(String instance, RecordKey key, boolean recovered, Throwable failure) {}

  /**
   * A phased record became {@link RecordState#UNCERTAIN}: a resumption failed past its operation's resume cap.
   *
   * @param record the uncertain record as written (its resume count, recovery point)
   * @param cause the failure of the last resumption, or {@code null} when its phase answered without being kept
   */
  default void onUncertain(String instance, IdempotencyRecord record, Throwable cause) {}

  /**
   * A reconciler answered for an uncertain record: {@code result} is what it said; {@code applied} is whether its
   * decision took effect (false for UNKNOWN, and when another node decided the record first). A reconciler that threw
   * is reported as UNKNOWN with its {@code failure}.
   */
  default void onReconciled(String instance, RecordKey key, Reconciler.Verdict.Result result, boolean applied,
      Throwable failure) {}

  /** An operator's resolution (through {@code Idem.resolve}) took effect; the audit entry tells who, what and why. */
  default void onResolved(String instance, AuditEntry entry) {}

  /** A store call finished. {@code call} is a short fixed name such as {@code "find"} or {@code "insert"}. */
  default void onStoreCall(String store, String call, long nanos, boolean success) {}

  /**
   * A kept answer could not be opened (see {@link dev.idem.core.crypto.DecryptionException}): the request that read
   * it fails, and nothing runs again. {@code store} is the store's name.
   */
  default void onRecordUnreadable(String store, RecordKey key, DecryptionException failure) {}
}
