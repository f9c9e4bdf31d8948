package dev.idem.jdbc;

import dev.idem.core.spi.TransactionWork;
import dev.idem.jdbc.internal.SchemaScript;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;

/** What the JDBC stores share: a table of one schema file, on a data source, in one dialect. */
abstract class JdbcStore {
  final StoreConnections db;
  final JdbcDialect dialect;
  final String name;
  final String table;
  private final SchemaScript schema;

  JdbcStore(DataSource dataSource, JdbcDialect dialect, String name, String table, SchemaScript schema) {
    this.db = new StoreConnections(dataSource, name, dialect);
    this.dialect = dialect;
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
    return db.dataSource();
  }

  /**
   * Runs the work in a new {@link JdbcTransaction} on a connection of {@link #dataSource()}, and commits it unless
   * the work throws or marked it rollback-only.
   */
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    return JdbcTransaction.runInNew(db.dataSource(), name, dialect, work);
  }

  /** Creates the store's tables and indexes where missing, from this dialect's schema file. */
  public void createSchemaIfMissing() {
    try (Connection c = db.dataSource().getConnection()) {
      schema.run(c, dialect, table);
    } catch (SQLException e) {
      throw db.wrap("creating the " + schema.name().toLowerCase(Locale.ROOT) + " schema", e);
    }
  }

  @Override
  public String toString() {
    return getClass().getSimpleName() + '{' + dialect + ' ' + table + '}';
  }
}
