package dev.idem.core;

/**
 * The work threw a checked exception; it is the cause. The key was released (atomic: the transaction rolled back;
 * phased and leased: the lease was given up), so a retry with the same key runs again.
 */
public class WorkFailedException extends IdemException {
  private static final long serialVersionUID = 1L;

  public WorkFailedException(RecordKey key, Throwable cause) {
    super("work of " + key.operation() + " for key '" + key.key() + "' failed: " + cause, cause);
  }
}
