package dev.idem.jdbc;

class H2PurgeWhileClaimingTest extends PurgeWhileClaimingContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
