package dev.idem.core.spi;

/**
 * A transaction of a store, handed to the work that runs inside it. A JDBC store's transaction unwraps to its
 * {@code java.sql.Connection}; the in-memory store's transaction unwraps to nothing.
 *
 * <p>Valid only while the work runs, on the thread that runs it.
 */
public interface StoreTransaction {
  /**
   * The underlying resource, such as {@code java.sql.Connection}.
   *
   * @throws IllegalArgumentException when this transaction has no resource of that type
   */
  <T> T unwrap(Class<T> type);

  /** Marks the transaction so that it rolls back instead of committing, whatever the work returns. */
  void setRollbackOnly();

  boolean isRollbackOnly();
}
