package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class H2EncryptedRoutesTest extends EncryptedRoutesContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
