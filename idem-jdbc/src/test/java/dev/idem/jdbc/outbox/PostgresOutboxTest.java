package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class PostgresOutboxTest extends OutboxContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
