package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class MariaDbEncryptedRoutesTest extends EncryptedRoutesContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.MARIADB;
  }
}
