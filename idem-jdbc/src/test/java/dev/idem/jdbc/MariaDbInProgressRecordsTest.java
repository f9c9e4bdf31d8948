package dev.idem.jdbc;

class MariaDbInProgressRecordsTest extends InProgressRecordsContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.MARIADB;
  }
}
