package dev.idem.jdbc;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;

/**
 * A JDBC store's transaction: the connection the work and the record share. Valid only while the work runs, on
 * its thread. Do not commit, roll back or close the connection yourself; return from the work (or throw).
 *
 * <p>The transaction begins lazily: the store's own look-up before the work runs in auto-commit mode, so a replay
 * costs one read and no BEGIN/COMMIT. The first call to {@link #connection()} (or {@code unwrap}) switches
 * auto-commit off.
 */
public final class JdbcTransaction implements StoreTransaction {
  private final Connection connection;
  private final boolean owned;
  private final String store;
  private final JdbcDialect dialect;
  private boolean begun;
  private boolean switchedAutoCommit;
  private boolean rollbackOnly;
  private boolean committed;
  private boolean ended;

  JdbcTransaction(Connection connection, boolean owned, String store, JdbcDialect dialect) throws SQLException {
    this.connection = Objects.requireNonNull(connection, "connection");
    this.owned = owned;
    this.store = store;
    this.dialect = dialect;
    this.begun = !owned || !connection.getAutoCommit();
  }

  /**
   * The connection of this transaction; the transaction begins here if it has not yet.
   *
   * @throws IllegalStateException when the store's work that this transaction was handed to has returned
   */
  public Connection connection() {
    if (ended) {
      throw new IllegalStateException("the transaction has ended: use it only inside the work it was handed to");
    }
    begin();
    return connection;
  }

  /** The connection of a store transaction that came from a JDBC store. */
  public static Connection connectionOf(StoreTransaction tx) {
    return tx.unwrap(Connection.class);
  }

  /** The connection as it is, for a read that may run before the transaction begins. */
  Connection connectionForRead() {
    return connection;
  }

  private void begin() {
    if (begun) {
      return;
    }
    try {
      if (connection.getAutoCommit()) {
        connection.setAutoCommit(false);
        switchedAutoCommit = true;
      }
    } catch (SQLException e) {
      throw SqlErrors.wrap(store, dialect, "beginning a transaction", e);
    }
    begun = true;
  }

  /** Whether the store began this transaction (and so may end it), as opposed to joining the caller's. */
  boolean owned() {
    return owned;
  }

  /** Whether the transaction has begun: a write or the work asked for the connection. */
  boolean begun() {
    return begun;
  }

  /** Whether beginning switched auto-commit off, so that the store switches it back on at the end. */
  boolean switchedAutoCommit() {
    return switchedAutoCommit;
  }

  /** The store already committed this transaction together with its last write. */
  boolean committed() {
    return committed;
  }

  void markCommitted() {
    committed = true;
  }

  @Override
  public <T> T unwrap(Class<T> type) {
    if (type.isInstance(connection)) {
      return type.cast(connection());
    }
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    throw new IllegalArgumentException("a JDBC transaction holds a java.sql.Connection, not " + type.getName());
  }

  @Override
  public void setRollbackOnly() {
    rollbackOnly = true;
  }

  @Override
  public boolean isRollbackOnly() {
    return rollbackOnly;
  }

  /**
   * The caller's own open transaction on {@code connection}, for the stores' methods that write in the caller's
   * transaction ({@code JdbcOutboxStore}'s enqueue, {@code JdbcInboxStore}'s records). Auto-commit must be off; the
   * caller commits, rolls back and closes the connection.
   */
  public static JdbcTransaction of(Connection connection) {
    try {
      return new JdbcTransaction(connection, false, "caller", null);
    } catch (SQLException e) {
      throw new IllegalStateException("unreachable: a joined transaction asks the connection nothing", e);
    }
  }

  /**
   * Runs the work in a transaction the store owns on {@code c}: begun lazily, committed when the work returns (unless
   * it marked the transaction rollback-only or the store committed it already), rolled back when it throws.
   */
  static <R> R runOwned(Connection c, String name, JdbcDialect dialect, TransactionWork<R> work) throws Exception {
    JdbcTransaction tx;
    try {
      tx = new JdbcTransaction(c, true, name, dialect);
    } catch (SQLException e) {
      throw SqlErrors.wrap(name, dialect, "beginning a transaction", e);
    }
    try {
      R result = work.execute(tx);
      if (tx.begun()) {
        if (tx.isRollbackOnly()) {
          try {
            c.rollback();
          } catch (SQLException e) {
            throw SqlErrors.wrap(name, dialect, "rollback", e);
          }
        } else if (!tx.committed()) {
          try {
            c.commit();
          } catch (SQLException e) {
            throw SqlErrors.wrap(name, dialect, "commit", e);
          }
        }
      }
      return result;
    } catch (Throwable t) {
      if (tx.begun()) {
        try {
          c.rollback();
        } catch (SQLException e) {
          t.addSuppressed(e);
        }
      }
      throw t;
    } finally {
      tx.ended = true;
      if (tx.switchedAutoCommit()) {
        try {
          c.setAutoCommit(true);
        } catch (SQLException ignored) {
          // the pool resets or discards the connection
        }
      }
    }
  }

}
