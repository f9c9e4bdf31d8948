package dev.idem.jdbc;

import dev.idem.core.StoreException;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * A JDBC store's transaction: the connection the work and the record share. Valid only while the work runs, on
 * its thread. Do not commit, roll back or close the connection yourself; return from the work (or throw).
 *
 * <p>In a transaction the store owns, the {@code java.sql.Connection} that {@link #unwrap} and {@link #connectionOf}
 * hand out enforces that: its {@code commit()}, {@code rollback()}, {@code setAutoCommit(true)}, {@code close()} and
 * {@code abort(...)} throw {@link IllegalStateException}, and so does every call but {@code isClosed()} (true),
 * {@code isValid} (false) and the object methods once the work has returned. A commit
 * of the work's writes before the store's own write would let them outlive a duplicate, and a rollback would undo
 * what the store then records as done. Savepoints and everything else pass through. (The driver's own connection,
 * reached through {@code unwrap} with a driver type or through a statement's, a result set's or the metadata's
 * {@code getConnection()}, is not guarded.) A caller's transaction ({@link #of}, a joined one) hands out its
 * connection as it is: the caller ends it.
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
  private volatile boolean ended;
  private volatile Connection guarded;

  /** {@code begun}: the transaction is open already (a joined one, or a connection lent with auto-commit off). */
  private JdbcTransaction(Connection connection, boolean owned, boolean begun, String store, JdbcDialect dialect) {
    this.connection = Objects.requireNonNull(connection, "connection");
    this.owned = owned;
    this.begun = begun;
    this.store = store;
    this.dialect = dialect;
  }

  /** A transaction in the caller's open one on {@code connection}, which the caller ends. */
  static JdbcTransaction joined(Connection connection, String store, JdbcDialect dialect) {
    return new JdbcTransaction(connection, false, true, store, dialect);
  }

  /**
   * The connection of this transaction, as {@link #unwrap} hands it out (in a transaction the store owns, a view that
   * refuses to end it); the transaction begins here if it has not yet.
   *
   * @throws IllegalStateException when the store's work that this transaction was handed to has returned
   */
  public Connection connection() {
    return unwrap(Connection.class);
  }

  /** The driver's connection, unguarded, for the stores' own statements; the transaction begins here. */
  Connection driverConnection() {
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

  /** The driver's connection of {@code tx}, for the stores' own statements; the transaction begins here. */
  static Connection driverConnectionOf(StoreTransaction tx) {
    return tx instanceof JdbcTransaction jdbc ? jdbc.driverConnection() : tx.unwrap(Connection.class);
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

  /**
   * {@code tx}, when a store's last write in it may carry its COMMIT: a JDBC transaction the store owns and that is not
   * marked rollback-only (the mark must still roll it back); null otherwise.
   */
  static JdbcTransaction committableWithLastWrite(StoreTransaction tx) {
    return tx instanceof JdbcTransaction jdbc && jdbc.owned && !jdbc.rollbackOnly ? jdbc : null;
  }

  /** The store committed this transaction together with its last write. */
  void markCommitted() {
    committed = true;
  }

  @Override
  public <T> T unwrap(Class<T> type) {
    if (type.isInstance(connection)) {
      Connection c = driverConnection();
      if (owned && type.isAssignableFrom(Connection.class)) {
        return type.cast(guarded());
      }
      return type.cast(c);
    }
    if (type.isInstance(this)) {
      return type.cast(this);
    }
    throw new IllegalArgumentException("a JDBC transaction holds a java.sql.Connection, not " + type.getName());
  }

  /** The view of the connection the work of a transaction the store owns is handed: one per transaction. */
  private Connection guarded() {
    Connection view = guarded;
    if (view == null) {
      synchronized (this) {
        view = guarded;
        if (view == null) {
          view = (Connection) Proxy.newProxyInstance(JdbcTransaction.class.getClassLoader(),
              new Class<?>[] {Connection.class}, new Guard());
          guarded = view;
        }
      }
    }
    return view;
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
    return joined(connection, "caller", null);
  }

  /**
   * Runs the work in a new transaction the store owns, on a connection of {@code dataSource} that it closes after;
   * see {@link #runOwned}. Failing to get a connection is a {@link dev.idem.core.StoreException} that is not
   * transient: retrying it at once would multiply every wait on an exhausted pool.
   */
  static <R> R runInNew(DataSource dataSource, String name, JdbcDialect dialect, TransactionWork<R> work)
      throws Exception {
    Connection connection;
    try {
      connection = dataSource.getConnection();
    } catch (SQLException e) {
      throw new StoreException(name, "getting a connection failed: " + e.getMessage(), e.getSQLState(), false, false,
          e);
    }
    try (connection) {
      return runOwned(connection, name, dialect, work);
    }
  }

  /**
   * Runs the work in a transaction the store owns on {@code c}: begun lazily, committed when the work returns (unless
   * it marked the transaction rollback-only or the store committed it already), rolled back when it throws.
   */
  static <R> R runOwned(Connection c, String name, JdbcDialect dialect, TransactionWork<R> work) throws Exception {
    JdbcTransaction tx;
    try {
      tx = new JdbcTransaction(c, true, !c.getAutoCommit(), name, dialect);
    } catch (SQLException e) {
      throw SqlErrors.wrap(name, dialect, "beginning a transaction", e);
    }
    try {
      R result = work.execute(tx);
      if (tx.begun && (tx.rollbackOnly || !tx.committed)) {
        try {
          if (tx.rollbackOnly) {
            c.rollback();
          } else {
            c.commit();
          }
        } catch (SQLException e) {
          throw SqlErrors.wrap(name, dialect, tx.rollbackOnly ? "rollback" : "commit", e);
        }
      }
      return result;
    } catch (Throwable t) {
      if (tx.begun) {
        JdbcStore.rollbackQuietly(c, t);
      }
      throw t;
    } finally {
      tx.ended = true;
      if (tx.switchedAutoCommit) {
        JdbcStore.restore(c, true, -1);
      }
    }
  }

  /**
   * The connection of the caller's open transaction.
   *
   * @throws IllegalStateException when it is in auto-commit mode (a write there would commit on its own), when
   *     {@code tx} holds no JDBC connection, or when it has ended
   */
  static Connection callerConnection(StoreTransaction tx, String table, JdbcDialect dialect) {
    Connection connection;
    try {
      connection = driverConnectionOf(Objects.requireNonNull(tx, "tx"));
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException("this writes in a JDBC transaction (JdbcTransaction.of(connection), or the"
          + " store's inTransaction), not in " + tx.getClass().getName(), e);
    }
    try {
      if (connection.getAutoCommit()) {
        throw new IllegalStateException("this writes in the caller's transaction: switch auto-commit off and commit"
            + " with the business write (JdbcTransaction.of(connection)), or the write would commit on its own");
      }
    } catch (SQLException e) {
      if (isClosed(connection)) {
        throw new IllegalStateException("the transaction has ended: its connection is closed", e);
      }
      throw SqlErrors.wrap(table, dialect, "checking the transaction", e);
    }
    return connection;
  }

  private static boolean isClosed(Connection connection) {
    try {
      return connection.isClosed();
    } catch (SQLException e) {
      return false;
    }
  }

  /** The connection of a transaction the store owns, as the work sees it: the store ends the transaction. */
  private final class Guard implements InvocationHandler {
    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      String name = method.getName();
      int arity = args == null ? 0 : args.length;
      if (arity == 0 && name.equals("hashCode")) {
        return System.identityHashCode(proxy);
      }
      if (arity == 0 && name.equals("toString")) {
        return "the connection of a transaction of " + store + " (" + connection + ")";
      }
      if (arity == 1 && name.equals("equals")) {
        return proxy == args[0];
      }
      if (ended) {
        switch (name) {
          case "isClosed":
            return true;
          case "isValid":
            return false;
          default:
            throw new IllegalStateException("the transaction of " + store + " has ended: use its connection only"
                + " inside the work it was handed to");
        }
      }
      switch (name) {
        case "commit", "close", "abort":
          throw refused(name + "()");
        case "rollback":
          if (arity == 0) {
            throw refused("rollback()");
          }
          break;
        case "setAutoCommit":
          if (Boolean.TRUE.equals(args[0])) {
            throw refused("setAutoCommit(true)");
          }
          break;
        case "unwrap":
          if (((Class<?>) args[0]).isInstance(proxy)) {
            return proxy; // the view is a Connection: only a driver type reaches under it
          }
          break;
        default:
          break;
      }
      try {
        return method.invoke(connection, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }

    private IllegalStateException refused(String call) {
      return new IllegalStateException(call + " on the connection of a transaction that " + store + " owns: return"
          + " from the work to commit it, or throw to roll it back; the store ends the transaction itself");
    }
  }
}
