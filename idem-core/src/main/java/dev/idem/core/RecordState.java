package dev.idem.core;

/** The states of a record; an absent record has no state. See docs/architecture.md, "Record states". */
public enum RecordState {
  /** Claimed; work is running under a lease, or its lease expired and the completer will resume it. */
  IN_PROGRESS,
  /** Finished with a kept success; replayed until expiry. */
  COMPLETED,
  /** Finished with a kept deterministic failure (validation, declined, not found); replayed until expiry. */
  FAILED,
  /**
   * A phased record whose outside effect could not be confirmed within its operation's resume cap
   * ({@link OperationPolicy#resumeCapAttempts()}, {@link OperationPolicy#resumeCapAge()}): it is never resumed or run
   * again blindly. It holds no lease and no response, keeps its recovery point, checkpoint and key nonce, never
   * expires and is never purged; a {@link Reconciler} or an operator ({@code IdempotencyAdmin.resolve}) decides it:
   * completed, failed, or back in progress for a new round of resumptions.
   */
  UNCERTAIN;

  /** Whether the record holds a kept response that a replay returns: COMPLETED or FAILED. */
  public boolean isFinal() {
    return this == COMPLETED || this == FAILED;
  }
}
