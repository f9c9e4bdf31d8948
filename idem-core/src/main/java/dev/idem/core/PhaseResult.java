package dev.idem.core;

import java.util.Objects;

/**
 * What a phase of a {@link PhasedOperation} ended with: go on with a checkpoint, answer, or a permanent refusal by the
 * other system. Immutable.
 */
public final class PhaseResult {
  private final Checkpoint checkpoint;
  private final StoredResponse response;
  private final boolean refusal;

  private PhaseResult(Checkpoint checkpoint, StoredResponse response, boolean refusal) {
    this.checkpoint = checkpoint;
    this.response = response;
    this.refusal = refusal;
  }

  /** Commit this phase as the new recovery point with these values, and go on with the next phase. */
  public static PhaseResult next(Checkpoint checkpoint) {
    return new PhaseResult(Objects.requireNonNull(checkpoint, "checkpoint"), null, false);
  }

  /**
   * End the operation with this answer. Kept answers finish the record (COMPLETED or FAILED); an answer the keep
   * policy does not keep releases the lease and leaves the record at its recovery point for a retry.
   */
  public static PhaseResult respond(StoredResponse response) {
    return new PhaseResult(null, Objects.requireNonNull(response, "response"), false);
  }

  /**
   * End the operation for good: the other system refused the call permanently (calling again, with the same derived
   * key, gets the same refusal), so the operation can never complete. The record ends FAILED with this answer, kept
   * whatever the keep policy says and replayed until expiry; the completer never resumes it. When a phase after the
   * first refuses, the operation's {@linkplain PhasedOperation.Builder#onRefusal release step} runs first, in the
   * transaction that ends the record (for a phase in a transaction, that phase's own), so that what the committed
   * phases reserved is given back exactly when the record ends.
   *
   * <p>A transient failure (an outage, a timeout) is not a refusal: answer it with a status the keep policy does not
   * keep (503, 504), or throw, and a retry or the completer resumes the operation.
   *
   * @param response the answer: a client error (4xx) whose body says the request cannot succeed as sent
   * @throws IllegalArgumentException when the status is not 4xx
   */
  public static PhaseResult refuse(StoredResponse response) {
    Objects.requireNonNull(response, "response");
    if (response.status() < 400 || response.status() > 499) {
      throw new IllegalArgumentException("a refusal answers with a client error (4xx): it is kept and never retried;"
          + " got " + response.status());
    }
    return new PhaseResult(null, response, true);
  }

  /** The checkpoint to go on with, or {@code null} when this result answers. */
  public Checkpoint checkpoint() {
    return checkpoint;
  }

  /** The answer, or {@code null} when this result goes on. */
  public StoredResponse response() {
    return response;
  }

  /** Whether this result answers: {@link #respond} or {@link #refuse}. */
  public boolean isResponse() {
    return response != null;
  }

  /** Whether this result is a permanent refusal ({@link #refuse}). */
  public boolean isRefusal() {
    return refusal;
  }
}
