package dev.idem.webhook;

import dev.idem.jdbc.JdbcDialect;

class H2WebhookReceiverServletTest extends WebhookReceiverServletContract {
  @Override
  protected JdbcDialect dialect() {
    return JdbcDialect.H2;
  }
}
