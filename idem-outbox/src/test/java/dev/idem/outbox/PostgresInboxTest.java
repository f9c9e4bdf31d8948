package dev.idem.outbox;

import dev.idem.jdbc.JdbcDialect;

class PostgresInboxTest extends InboxContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
