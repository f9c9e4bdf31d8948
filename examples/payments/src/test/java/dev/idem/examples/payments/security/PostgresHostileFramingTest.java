package dev.idem.examples.payments.security;

/** {@link HostileFramingTest} on PostgreSQL ({@code idem.test.postgres.url}), in a schema of its own. */
class PostgresHostileFramingTest extends HostileFramingTest {
  @Override
  protected boolean onPostgres() {
    return true;
  }
}
