package dev.idem.jdbc;

class PostgresRowsFromBeforeRetentionTest extends RowsFromBeforeRetentionContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
