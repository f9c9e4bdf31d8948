package dev.idem.examples.payments;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The console's routes on MariaDB ({@code idem.test.mariadb.url}, user {@code idem.test.mariadb.user}), in a database
 * of its own.
 */
class ConsoleMariaDbRoutesTest extends ConsoleRoutesContract {
  private DatabaseOfItsOwn database;

  @BeforeAll
  void start() {
    database = DatabaseOfItsOwn.mariadb();
    service = RunningService.start("--spring.datasource.url=" + database.jdbcUrl(),
        "--spring.datasource.username=" + database.user());
  }

  @AfterAll
  void stop() {
    try {
      if (service != null) {
        service.close();
      }
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }
}
