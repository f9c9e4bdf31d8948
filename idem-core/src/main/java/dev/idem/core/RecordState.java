package dev.idem.core;

/** The states of a record; an absent record has no state. See docs/architecture.md, "Record states". */
public enum RecordState {
  /** Claimed; work is running under a lease, or its lease expired and the completer will resume it. */
  IN_PROGRESS,
  /** Finished with a kept success; replayed until expiry. */
  COMPLETED,
  /** Finished with a kept deterministic failure (validation, declined, not found); replayed until expiry. */
  FAILED;

  public boolean isFinal() {
    return this != IN_PROGRESS;
  }
}
