package dev.idem.examples.payments.security;

import dev.idem.examples.payments.DatabaseOfItsOwn;
import java.util.List;
import org.junit.jupiter.api.AfterAll;

/**
 * {@link HostileTextTest} on PostgreSQL ({@code idem.test.postgres.url}), in a schema of its own: the database that
 * refuses a NUL in text with an error, which the service must never meet, nor show.
 */
class PostgresHostileTextTest extends HostileTextTest {
  private DatabaseOfItsOwn database;

  @Override
  List<String> database() {
    database = DatabaseOfItsOwn.postgres();
    return database.arguments();
  }

  @Override
  @AfterAll
  void stop() {
    try {
      super.stop();
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }
}
