package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class MariaDbEventsTest extends EventsContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.MARIADB;
  }
}
