package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class MariaDbInboxTest extends InboxContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.MARIADB;
  }
}
