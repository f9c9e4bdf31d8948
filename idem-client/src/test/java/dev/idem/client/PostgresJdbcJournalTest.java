package dev.idem.client;

import com.zaxxer.hikari.HikariDataSource;
import javax.sql.DataSource;

/** Needs PostgreSQL at {@code idem.test.postgres.url}; fails, never skips, when it is not reachable. */
class PostgresJdbcJournalTest extends JdbcJournalContractTest {
  private static final String URL =
      System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
  private static final String USER = System.getProperty("idem.test.postgres.user", "postgres");
  private static HikariDataSource pool;

  @Override
  DataSource dataSource() {
    synchronized (PostgresJdbcJournalTest.class) {
      if (pool == null) {
        pool = pool(URL, USER, "test-client-postgres");
      }
      return pool;
    }
  }

  @Override
  JdbcJournal.Dialect expectedDialect() {
    return JdbcJournal.Dialect.POSTGRESQL;
  }

  @Override
  HikariDataSource newPool() {
    return pool(URL, USER, "test-client-postgres-second");
  }
}
