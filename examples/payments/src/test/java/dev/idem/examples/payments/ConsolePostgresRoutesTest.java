package dev.idem.examples.payments;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The console's routes on PostgreSQL ({@code idem.test.postgres.url}, user {@code idem.test.postgres.user}), in a
 * schema of its own.
 */
class ConsolePostgresRoutesTest extends ConsoleRoutesContract {
  private DatabaseOfItsOwn database;

  @BeforeAll
  void start() {
    database = DatabaseOfItsOwn.postgres();
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
