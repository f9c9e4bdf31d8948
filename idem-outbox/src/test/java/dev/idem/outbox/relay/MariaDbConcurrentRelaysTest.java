package dev.idem.outbox.relay;

import dev.idem.jdbc.JdbcDialect;

class MariaDbConcurrentRelaysTest extends ConcurrentRelaysContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.MARIADB;
  }
}
