package dev.idem.examples.payments;

import java.util.List;

/** {@link ProviderRefusalTest} on PostgreSQL, in a schema of its own. */
class PostgresProviderRefusalTest extends ProviderRefusalTest {
  private DatabaseOfItsOwn postgres;

  @Override
  List<String> database() {
    postgres = DatabaseOfItsOwn.postgres();
    return postgres.arguments();
  }

  @Override
  void closeDatabase() {
    if (postgres != null) {
      postgres.close();
    }
  }
}
