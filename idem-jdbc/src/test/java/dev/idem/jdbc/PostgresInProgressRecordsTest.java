package dev.idem.jdbc;

class PostgresInProgressRecordsTest extends InProgressRecordsContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
