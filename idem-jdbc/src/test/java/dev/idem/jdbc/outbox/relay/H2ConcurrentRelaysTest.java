package dev.idem.jdbc.outbox.relay;

import dev.idem.jdbc.JdbcDialect;

class H2ConcurrentRelaysTest extends ConcurrentRelaysContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
