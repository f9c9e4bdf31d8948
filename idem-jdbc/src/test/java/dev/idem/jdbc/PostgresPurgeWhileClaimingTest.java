package dev.idem.jdbc;

class PostgresPurgeWhileClaimingTest extends PurgeWhileClaimingContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
