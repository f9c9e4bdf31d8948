package dev.idem.jdbc;

class H2RowsFromBeforeRetentionTest extends RowsFromBeforeRetentionContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
