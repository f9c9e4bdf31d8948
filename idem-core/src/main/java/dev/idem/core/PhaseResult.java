package dev.idem.core;

import java.util.Objects;

/** What a phase of a {@link PhasedOperation} ended with: go on with a checkpoint, or answer. Immutable. */
public final class PhaseResult {
  private final Checkpoint checkpoint;
  private final StoredResponse response;

  private PhaseResult(Checkpoint checkpoint, StoredResponse response) {
    this.checkpoint = checkpoint;
    this.response = response;
  }

  /** Commit this phase as the new recovery point with these values, and go on with the next phase. */
  public static PhaseResult next(Checkpoint checkpoint) {
    return new PhaseResult(Objects.requireNonNull(checkpoint, "checkpoint"), null);
  }

  /**
   * End the operation with this answer. Kept answers finish the record (COMPLETED or FAILED); an answer the keep
   * policy does not keep releases the lease and leaves the record at its recovery point for a retry.
   */
  public static PhaseResult respond(StoredResponse response) {
    return new PhaseResult(null, Objects.requireNonNull(response, "response"));
  }

  /** The checkpoint to go on with, or {@code null} when this result answers. */
  public Checkpoint checkpoint() {
    return checkpoint;
  }

  /** The answer, or {@code null} when this result goes on. */
  public StoredResponse response() {
    return response;
  }

  public boolean isResponse() {
    return response != null;
  }
}
