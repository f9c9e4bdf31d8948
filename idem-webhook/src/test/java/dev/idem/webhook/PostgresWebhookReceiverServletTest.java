package dev.idem.webhook;

import dev.idem.jdbc.JdbcDialect;

class PostgresWebhookReceiverServletTest extends WebhookReceiverServletContract {
  @Override
  protected JdbcDialect dialect() {
    return JdbcDialect.POSTGRESQL;
  }
}
