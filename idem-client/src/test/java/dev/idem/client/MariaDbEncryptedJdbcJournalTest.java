package dev.idem.client;

import javax.sql.DataSource;

class MariaDbEncryptedJdbcJournalTest extends EncryptedJdbcJournalContract {
  @Override
  DataSource dataSource() {
    return new MariaDbJdbcJournalTest().dataSource();
  }
}
