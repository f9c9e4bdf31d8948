package dev.idem.jdbc;

import dev.idem.core.StoreException;
import dev.idem.core.spi.TransactionWork;
import dev.idem.jdbc.internal.SchemaScript;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * What the JDBC stores share: a table of one schema file, on a data source, in one dialect; and the stores' own short
 * units of work, each on a connection of the data source that goes back to the pool as it was lent.
 */
abstract class JdbcStore {
  /** Work on a connection. */
  interface Work<R> {
    R run(Connection c) throws SQLException;
  }

  /** Sets a statement's parameters. */
  interface Binder {
    void bind(PreparedStatement ps) throws SQLException;
  }

  /** Reads the current row. */
  interface RowReader<T> {
    T read(ResultSet rs) throws SQLException;
  }

  final DataSource dataSource;
  final JdbcDialect dialect;
  final String name;
  final String table;
  private final SchemaScript schema;

  /** {@code dialect} null: detected from the data source. */
  JdbcStore(DataSource dataSource, JdbcDialect dialect, String name, String table, SchemaScript schema) {
    this.dataSource = dataSource;
    this.dialect = dialect == null ? JdbcDialect.detect(dataSource, name) : dialect;
    this.name = name;
    this.table = table;
    this.schema = schema;
  }

  /** The store's name, in log lines and exception messages (an outbox's or an inbox's is its table). */
  public String name() {
    return name;
  }

  /** The database's dialect. */
  public JdbcDialect dialect() {
    return dialect;
  }

  /** The table (an outbox's attempt history is {@code <table>_attempt}). */
  public String table() {
    return table;
  }

  /** The data source the store takes its connections from. */
  public DataSource dataSource() {
    return dataSource;
  }

  /**
   * Runs the work in a new {@link JdbcTransaction} on a connection of {@link #dataSource()}, and commits it unless
   * the work throws or marked it rollback-only.
   */
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    return JdbcTransaction.runInNew(dataSource, name, dialect, work);
  }

  /** Creates the store's tables and indexes where missing, from this dialect's schema file. */
  public void createSchemaIfMissing() {
    try (Connection c = dataSource.getConnection()) {
      schema.run(c, dialect, table);
    } catch (SQLException e) {
      throw wrap("creating the " + schema.name().toLowerCase(Locale.ROOT) + " schema", e);
    }
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + '{' + dialect + ' ' + table + '}';
  }

  /** {@code what} failed with {@code e}: a {@link StoreException} that names the store ({@link SqlErrors#wrap}). */
  StoreException wrap(String what, SQLException e) {
    return SqlErrors.wrap(name, dialect, what, e);
  }

  /** Runs the work on a connection as it was lent. */
  <R> R withConnection(String what, Work<R> work) {
    try (Connection c = dataSource.getConnection()) {
      return work.run(c);
    } catch (SQLException e) {
      throw wrap(what, e);
    }
  }

  /** Runs the work on a connection as it was lent, then commits if the connection was lent with auto-commit off. */
  <R> R committing(String what, Work<R> work) {
    return withConnection(what, c -> {
      R result = work.run(c);
      if (!c.getAutoCommit()) {
        c.commit();
      }
      return result;
    });
  }

  /** Runs the work in auto-commit mode: each statement is its own transaction. */
  <R> R autoCommit(String what, Work<R> work) {
    return withConnection(what, c -> {
      boolean autoCommit = c.getAutoCommit();
      try {
        if (!autoCommit) {
          c.setAutoCommit(true);
        }
        return work.run(c);
      } finally {
        restore(c, autoCommit, -1);
      }
    });
  }

  /**
   * Runs the work in one transaction: committed when the work returns, rolled back when it throws. With {@code
   * readCommitted}, at READ COMMITTED (only then is the isolation asked for: that costs a round trip on some drivers).
   */
  <R> R transaction(String what, boolean readCommitted, Work<R> work) {
    return withConnection(what, c -> {
      boolean autoCommit = c.getAutoCommit();
      int isolation = readCommitted ? c.getTransactionIsolation() : -1;
      try {
        c.setAutoCommit(false);
        if (readCommitted) {
          c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        }
        R result = work.run(c);
        c.commit();
        return result;
      } catch (SQLException | RuntimeException | Error e) {
        rollbackQuietly(c, e);
        throw e;
      } finally {
        restore(c, autoCommit, isolation);
      }
    });
  }

  /** One statement in auto-commit mode, {@code args} set with {@code setObject}; returns the update count. */
  int executeUpdate(String what, String sql, Object... args) {
    return autoCommit(what, c -> {
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        bind(ps, 1, Arrays.asList(args));
        return ps.executeUpdate();
      }
    });
  }

  /** Every row of a query, in the order read. */
  static <T> List<T> query(Connection c, String sql, Binder binder, RowReader<T> reader) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      binder.bind(ps);
      List<T> rows = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(reader.read(rs));
        }
      }
      return rows;
    }
  }

  /** Sets {@code args} with {@code setObject} from parameter {@code at} on; returns the next parameter. */
  static int bind(PreparedStatement ps, int at, List<?> args) throws SQLException {
    for (Object a : args) {
      ps.setObject(at++, a);
    }
    return at;
  }

  /** A column of epoch milliseconds as an instant, or null where SQL NULL. */
  static Instant instantOrNull(ResultSet rs, int column) throws SQLException {
    long millis = rs.getLong(column);
    return rs.wasNull() ? null : Instant.ofEpochMilli(millis);
  }

  /** {@code n} comma-separated bind markers: {@code ?, ?, ?}. */
  static String marks(int n) {
    return String.join(", ", Collections.nCopies(n, "?"));
  }

  /** Rolls back after {@code cause}, to which a failure to roll back is added as suppressed. */
  static void rollbackQuietly(Connection c, Throwable cause) {
    try {
      c.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  /** Puts a pooled connection back as it was lent ({@code isolation} -1: unchanged). */
  static void restore(Connection c, boolean autoCommit, int isolation) {
    try {
      if (isolation >= 0 && c.getTransactionIsolation() != isolation) {
        c.setTransactionIsolation(isolation);
      }
      if (c.getAutoCommit() != autoCommit) {
        c.setAutoCommit(autoCommit);
      }
    } catch (SQLException ignored) {
      // the pool validates the connection before it is lent again
    }
  }
}
