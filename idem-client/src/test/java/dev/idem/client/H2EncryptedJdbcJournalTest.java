package dev.idem.client;

import javax.sql.DataSource;

class H2EncryptedJdbcJournalTest extends EncryptedJdbcJournalContract {
  @Override
  DataSource dataSource() {
    return new H2JdbcJournalTest().dataSource();
  }
}
