package dev.idem.jdbc;

class MariaDbPurgeWhileClaimingTest extends PurgeWhileClaimingContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.MARIADB;
  }
}
