package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class PostgresEventsTest extends EventsContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
