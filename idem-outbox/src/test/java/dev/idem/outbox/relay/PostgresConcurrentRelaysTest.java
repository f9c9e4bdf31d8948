package dev.idem.outbox.relay;

import dev.idem.jdbc.JdbcDialect;

class PostgresConcurrentRelaysTest extends ConcurrentRelaysContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
