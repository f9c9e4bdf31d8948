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
   * A reconciler's answer: completed or failed with the answer a replay returns from now on, or still unknown (the
   * record stays uncertain). Immutable.
   *
   * @param result which
   * @param response the answer, {@code null} for {@link Result#UNKNOWN}
   */
  record Verdict(Result result, StoredResponse response) {
    /** Which way a reconciler decided. */
    public enum Result {
      /** The effect happened: the record ends COMPLETED. */
      COMPLETED,
      /** The effect did not happen and will not: the record ends FAILED, kept like a deterministic failure. */
      FAILED,
      /** The other system cannot tell yet: the record stays UNCERTAIN. */
      UNKNOWN
    }

    private static final Verdict UNKNOWN_VERDICT = new Verdict(Result.UNKNOWN, null);

    public Verdict {
      Objects.requireNonNull(result, "result");
      if ((result == Result.UNKNOWN) != (response == null)) {
        throw new IllegalArgumentException(result + " " + (response == null ? "needs" : "has no") + " response");
      }
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
