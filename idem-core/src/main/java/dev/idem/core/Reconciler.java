package dev.idem.core;

import java.util.Objects;

/**
 * Asks the other system what became of an {@link RecordState#UNCERTAIN} record of one phased operation, and so decides
 * it: registered with the operation ({@link PhasedOperation.Builder#reconciler}), and run by the
 * {@link Completer}'s reconciliation rounds ({@link Completer#reconcileOnce()}) on that operation's uncertain records.
 * It looks the outside call up by the key that call carried: {@code record.derive("charge")}, the same value as
 * {@code ctx.derivedKey("charge")} in the phase. Implementations must be thread-safe; one that throws leaves the
 * record uncertain for the next round, as {@link Verdict#unknown()} does.
 *
 * <p>A decision is applied after the reconciler returns, in a transaction of its own (conditional on the record's
 * version, and audited): a reconciler that writes data of its own (marks a pending payment failed, say) must make
 * those writes safe to repeat, because a crash in between, or another node deciding first, asks it again. When the
 * operation books something after the outside call, {@link Verdict#resume()} lets its own phases do it.
 *
 * <pre>{@code
 * Reconciler reconciler = record -> provider.lookUp(record.derive("charge"))
 *     .map(charge -> charge.succeeded()
 *         ? Reconciler.Verdict.completed(StoredResponse.json(201, paymentJson(record, charge)))
 *         : Reconciler.Verdict.failed(StoredResponse.json(402, declinedJson(record, charge))))
 *     .orElse(Reconciler.Verdict.unknown());
 * }</pre>
 */
@FunctionalInterface
public interface Reconciler {

  /**
   * What happened downstream for {@code record}.
   *
   * @param record the uncertain record: its key, recovery point, checkpoint, and {@link IdempotencyRecord#derive}
   */
  Verdict reconcile(IdempotencyRecord record) throws Exception;

  /**
   * A reconciler's answer: completed or failed with the answer a replay returns from now on; resume (the other system
   * knows the call and answers it again for its key, so the record's phases can finish it); or still unknown (the
   * record stays uncertain). Immutable.
   *
   * @param result which
   * @param response the answer; {@code null} for {@link Result#RESUME} and {@link Result#UNKNOWN}
   */
  record Verdict(Result result, StoredResponse response) {
    /** Which way a reconciler decided. */
    public enum Result {
      /** The effect happened: the record ends COMPLETED. */
      COMPLETED,
      /** The effect did not happen and will not: the record ends FAILED, kept like a deterministic failure. */
      FAILED,
      /**
       * The other system knows the call (it applied it, or refused it) and answers a repeat of it with the same
       * result: running the record's remaining phases again is safe. The record goes back to IN_PROGRESS with its
       * lease expired and its resume count reset, and the completer (or a retry) finishes it, its own writes
       * included. The usual answer of a reconciler whose operation books something after the outside call.
       */
      RESUME,
      /** The other system cannot tell yet: the record stays UNCERTAIN. */
      UNKNOWN
    }

    private static final Verdict UNKNOWN_VERDICT = new Verdict(Result.UNKNOWN, null);
    private static final Verdict RESUME_VERDICT = new Verdict(Result.RESUME, null);

    public Verdict {
      Objects.requireNonNull(result, "result");
      boolean answers = result == Result.COMPLETED || result == Result.FAILED;
      if (answers != (response != null)) {
        throw new IllegalArgumentException(result + " " + (answers ? "needs a" : "has no") + " response");
      }
    }

    /** The other system knows the call: resume the record's phases, which then finish it. */
    public static Verdict resume() {
      return RESUME_VERDICT;
    }

    /** The effect happened; replays return {@code response} (a status below 400). */
    public static Verdict completed(StoredResponse response) {
      return new Verdict(Result.COMPLETED, Objects.requireNonNull(response, "response"));
    }

    /** The effect did not happen; replays return {@code response} (a 4xx). */
    public static Verdict failed(StoredResponse response) {
      return new Verdict(Result.FAILED, Objects.requireNonNull(response, "response"));
    }

    /** Nothing known yet: ask again in a later round. */
    public static Verdict unknown() {
      return UNKNOWN_VERDICT;
    }
  }
}
