package dev.idem.core;

/**
 * A store failed. The message names the store and the statement; {@link #sqlState()} keeps the database's SQLState
 * when there is one.
 */
public class StoreException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final String storeName;
  private final String sqlState;
  private final boolean lockTimeout;
  private final boolean transientFailure;

  public StoreException(String storeName, String message, String sqlState, boolean lockTimeout,
      boolean transientFailure, Throwable cause) {
    super("store '" + storeName + "': " + message + (sqlState == null ? "" : " (SQLState " + sqlState + ")"), cause);
    this.storeName = storeName;
    this.sqlState = sqlState;
    this.lockTimeout = lockTimeout;
    this.transientFailure = transientFailure;
  }

  public StoreException(String storeName, String message, Throwable cause) {
    this(storeName, message, null, false, false, cause);
  }

  public String storeName() {
    return storeName;
  }

  /** The SQLState of the underlying failure, or {@code null}. */
  public String sqlState() {
    return sqlState;
  }

  /** The statement waited for a lock longer than allowed, typically behind a concurrent duplicate. */
  public boolean isLockTimeout() {
    return lockTimeout;
  }

  /**
   * The failure is worth retrying as a whole: a deadlock, a serialization failure, a lost connection, a lock
   * timeout.
   */
  public boolean isTransient() {
    return transientFailure;
  }

  /**
   * The store's schema does not fit: SQLState class 42 (syntax error or access rule violation), as for a missing
   * table or column or a refused permission. A fault of the deployment that no retry cures.
   */
  public boolean isSchemaFault() {
    return sqlState != null && sqlState.startsWith("42");
  }
}
