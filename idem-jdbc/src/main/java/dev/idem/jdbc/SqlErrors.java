package dev.idem.jdbc;

import dev.idem.core.StoreException;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientException;

/**
 * Classifies SQL failures per dialect, as every Idem store on JDBC does: unique violations (a lost race for a key),
 * lock timeouts, and transient failures (a lost connection or a server going away, a deadlock, a serialization
 * failure) that a retry may cure. For stores of your own on JDBC, so that their {@link StoreException}s mean what
 * Idem's do.
 */
public final class SqlErrors {
  private SqlErrors() {}

  /** Whether {@code e} is a unique or primary-key violation. */
  public static boolean isUniqueViolation(JdbcDialect dialect, SQLException e) {
    return dialect == JdbcDialect.MARIADB ? e.getErrorCode() == 1062 || e.getErrorCode() == 1586
        : "23505".equals(e.getSQLState());
  }

  /** Whether {@code e} is a lock wait that timed out (or a statement cancelled by its timeout). */
  public static boolean isLockTimeout(JdbcDialect dialect, SQLException e) {
    if (e instanceof SQLTimeoutException) {
      return true;
    }
    if (dialect == null) {
      return false;
    }
    String state = e.getSQLState();
    return switch (dialect) {
      case POSTGRESQL -> "57014".equals(state) || "55P03".equals(state);
      case MARIADB -> e.getErrorCode() == 1205 || e.getErrorCode() == 1969 || "70100".equals(state);
      case H2 -> "HYT00".equals(state) || e.getErrorCode() == 50200;
    };
  }

  /**
   * Whether a retry may cure {@code e}: a connection failure (PostgreSQL's server going away included: SQLStates
   * 57P01, 57P02, 57P03), a deadlock, a serialization failure, a lock timeout.
   */
  public static boolean isTransient(JdbcDialect dialect, SQLException e) {
    if (e instanceof SQLTransientException || isLockTimeout(dialect, e)) {
      return true;
    }
    String state = e.getSQLState();
    if (state == null) {
      return false;
    }
    return state.startsWith("08") || state.equals("40001") || state.equals("40P01")
        // PostgreSQL ended the backend: shutdown or pg_terminate_backend, crash of another backend, still starting
        || state.equals("57P01") || state.equals("57P02") || state.equals("57P03")
        || dialect == JdbcDialect.MARIADB && e.getErrorCode() == 1213
        || dialect == JdbcDialect.H2 && (e.getErrorCode() == 90131 || e.getErrorCode() == 40001);
  }

  /** Wraps a failure with the store's name, the statement and the SQLState. */
  public static StoreException wrap(String store, JdbcDialect dialect, String what, SQLException e) {
    return new StoreException(store, what + " failed: " + e.getMessage(), e.getSQLState(),
        isLockTimeout(dialect, e), isTransient(dialect, e), e);
  }
}
