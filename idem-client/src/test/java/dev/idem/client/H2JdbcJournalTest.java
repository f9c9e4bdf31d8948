package dev.idem.client;

import com.zaxxer.hikari.HikariDataSource;
import java.util.UUID;
import javax.sql.DataSource;

class H2JdbcJournalTest extends JdbcJournalContractTest {
  private static final String URL = "jdbc:h2:mem:idem-client-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1";
  private static HikariDataSource pool;

  @Override
  DataSource dataSource() {
    synchronized (H2JdbcJournalTest.class) {
      if (pool == null) {
        pool = pool(URL, "sa", "test-client-h2");
      }
      return pool;
    }
  }

  @Override
  JdbcJournal.Dialect expectedDialect() {
    return JdbcJournal.Dialect.H2;
  }

  @Override
  HikariDataSource newPool() {
    return pool(URL, "sa", "test-client-h2-second");
  }
}
