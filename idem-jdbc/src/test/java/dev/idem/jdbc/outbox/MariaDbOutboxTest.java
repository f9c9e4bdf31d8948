package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class MariaDbOutboxTest extends OutboxContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.MARIADB;
  }
}
