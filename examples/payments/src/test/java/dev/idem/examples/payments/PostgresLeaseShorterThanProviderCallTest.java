package dev.idem.examples.payments;

import java.util.List;
import org.junit.jupiter.api.AfterAll;

/** {@link LeaseShorterThanProviderCallTest} on PostgreSQL ({@code idem.test.postgres.url}), in a schema of its own. */
class PostgresLeaseShorterThanProviderCallTest extends LeaseShorterThanProviderCallTest {
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
