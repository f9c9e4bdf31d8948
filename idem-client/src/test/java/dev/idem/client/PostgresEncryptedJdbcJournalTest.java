package dev.idem.client;

import javax.sql.DataSource;

class PostgresEncryptedJdbcJournalTest extends EncryptedJdbcJournalContract {
  @Override
  DataSource dataSource() {
    return new PostgresJdbcJournalTest().dataSource();
  }
}
