package dev.idem.examples.payments.security;

/** {@link WebhookUrlHostsTest} on PostgreSQL ({@code idem.test.postgres.url}), in a schema of its own. */
class PostgresWebhookUrlHostsTest extends WebhookUrlHostsTest {
  @Override
  protected boolean onPostgres() {
    return true;
  }
}
