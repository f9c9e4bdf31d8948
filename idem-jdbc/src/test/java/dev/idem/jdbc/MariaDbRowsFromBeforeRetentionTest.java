package dev.idem.jdbc;

class MariaDbRowsFromBeforeRetentionTest extends RowsFromBeforeRetentionContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.MARIADB;
  }
}
