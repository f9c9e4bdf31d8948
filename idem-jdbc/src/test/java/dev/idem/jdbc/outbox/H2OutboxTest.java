package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class H2OutboxTest extends OutboxContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
