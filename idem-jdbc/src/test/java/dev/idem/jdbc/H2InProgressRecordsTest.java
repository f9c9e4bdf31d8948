package dev.idem.jdbc;

class H2InProgressRecordsTest extends InProgressRecordsContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
