package dev.idem.examples.payments.security;

import dev.idem.examples.payments.DatabaseOfItsOwn;
import java.util.List;

/** {@link WebhookUrlHostsTest} on PostgreSQL ({@code idem.test.postgres.url}), in a schema of its own. */
class PostgresWebhookUrlHostsTest extends WebhookUrlHostsTest {
  @Override
  List<String> database() {
    DatabaseOfItsOwn database = DatabaseOfItsOwn.postgres();
    opened.push(database);
    return database.arguments();
  }
}
