package dev.idem.jdbc.outbox.relay;

import dev.idem.jdbc.JdbcDialect;

class PostgresConcurrentRelaysTest extends ConcurrentRelaysContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
