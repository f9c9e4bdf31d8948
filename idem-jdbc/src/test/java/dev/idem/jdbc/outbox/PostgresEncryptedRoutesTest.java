package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class PostgresEncryptedRoutesTest extends EncryptedRoutesContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
