package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class PostgresInboxTest extends InboxContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
