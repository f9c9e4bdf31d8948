package dev.idem.outbox;

import dev.idem.jdbc.JdbcDialect;

class PostgresOutboxTest extends OutboxContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
