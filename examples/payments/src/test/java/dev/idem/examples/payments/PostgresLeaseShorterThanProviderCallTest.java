package dev.idem.examples.payments;

/** {@link LeaseShorterThanProviderCallTest} on PostgreSQL ({@code idem.test.postgres.url}), in a schema of its own. */
class PostgresLeaseShorterThanProviderCallTest extends LeaseShorterThanProviderCallTest {
  @Override
  protected boolean onPostgres() {
    return true;
  }
}
