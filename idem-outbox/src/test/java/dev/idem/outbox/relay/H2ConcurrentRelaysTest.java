package dev.idem.outbox.relay;

import dev.idem.jdbc.JdbcDialect;

class H2ConcurrentRelaysTest extends ConcurrentRelaysContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
