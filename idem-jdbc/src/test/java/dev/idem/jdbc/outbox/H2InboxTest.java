package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class H2InboxTest extends InboxContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
