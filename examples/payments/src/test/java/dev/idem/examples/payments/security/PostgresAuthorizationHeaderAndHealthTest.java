package dev.idem.examples.payments.security;

/** {@link AuthorizationHeaderAndHealthTest} on PostgreSQL ({@code idem.test.postgres.url}), in a schema of its own. */
class PostgresAuthorizationHeaderAndHealthTest extends AuthorizationHeaderAndHealthTest {
  @Override
  protected boolean onPostgres() {
    return true;
  }
}
