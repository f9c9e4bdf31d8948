package dev.idem.client;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** Needs MariaDB at {@code idem.test.mariadb.url}; fails, never skips, when it is not reachable. */
class MariaDbJdbcJournalTest extends JdbcJournalContractTest {
  private static final String URL = System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test");
  private static final String USER = System.getProperty("idem.test.mariadb.user", "root");
  private static HikariDataSource pool;

  @Override
  DataSource dataSource() {
    synchronized (MariaDbJdbcJournalTest.class) {
      if (pool == null) {
        pool = pool(URL, USER, "test-client-mariadb");
      }
      return pool;
    }
  }

  @Override
  JdbcJournal.Dialect expectedDialect() {
    return JdbcJournal.Dialect.MARIADB;
  }

  @Override
  HikariDataSource newPool() {
    return pool(URL, USER, "test-client-mariadb-second");
  }
}
