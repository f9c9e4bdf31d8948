package dev.idem.jdbc.outbox.relay;

import dev.idem.jdbc.JdbcDialect;

class MariaDbConcurrentRelaysTest extends ConcurrentRelaysContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.MARIADB;
  }
}
