package dev.idem.jdbc.internal;

import dev.idem.core.StoreException;
import dev.idem.jdbc.JdbcDialect;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientException;

/** Classifies SQL failures per dialect: unique violations, lock timeouts and transient failures. */
public final class SqlErrors {
  private SqlErrors() {}

  public static boolean isUniqueViolation(JdbcDialect dialect, SQLException e) {
    String state = e.getSQLState();
    if (dialect == JdbcDialect.MARIADB) {
      return e.getErrorCode() == 1062 || e.getErrorCode() == 1586;
    }
    return "23505".equals(state);
  }

  public static boolean isLockTimeout(JdbcDialect dialect, SQLException e) {
    String state = e.getSQLState();
    if (e instanceof SQLTimeoutException) {
      return true;
    }
    switch (dialect) {
      case POSTGRESQL:
        return "57014".equals(state) || "55P03".equals(state);
      case MARIADB:
        return e.getErrorCode() == 1205 || e.getErrorCode() == 1969 || "70100".equals(state);
      case H2:
        return "HYT00".equals(state) || e.getErrorCode() == 50200;
      default:
        return false;
    }
  }

  public static boolean isTransient(JdbcDialect dialect, SQLException e) {
    String state = e.getSQLState();
    if (e instanceof SQLTransientException || isLockTimeout(dialect, e)) {
      return true;
    }
    if (state == null) {
      return false;
    }
    if (state.startsWith("08") || state.equals("40001") || state.equals("40P01")) {
      return true;
    }
    return dialect == JdbcDialect.MARIADB && e.getErrorCode() == 1213
        || dialect == JdbcDialect.H2 && (e.getErrorCode() == 90131 || e.getErrorCode() == 40001);
  }

  /** Wraps a failure with the store's name, the statement and the SQLState. */
  public static StoreException wrap(String store, JdbcDialect dialect, String what, SQLException e) {
    return new StoreException(store, what + " failed: " + e.getMessage(), e.getSQLState(),
        isLockTimeout(dialect, e), isTransient(dialect, e), e);
  }
}
