package dev.idem.core;

/**
 * This worker's lease on a record ended and another worker took the record over, so this worker's write was
 * refused (fencing). The other worker finishes the operation; a retry with the same key replays its answer.
 */
public class LeaseLostException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final transient RecordKey key;
  private final long version;

  public LeaseLostException(RecordKey key, long version, String phase) {
    super("lost the lease on " + key + " at version " + version + (phase == null ? "" : " in phase '" + phase + "'")
        + ": another worker took the record over, so this write was refused");
    this.key = key;
    this.version = version;
  }

  public RecordKey key() {
    return key;
  }

  /** The version this worker held. */
  public long version() {
    return version;
  }
}
