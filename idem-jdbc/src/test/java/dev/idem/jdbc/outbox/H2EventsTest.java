package dev.idem.jdbc.outbox;

import dev.idem.jdbc.JdbcDialect;

class H2EventsTest extends EventsContract {
  @Override
  JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
