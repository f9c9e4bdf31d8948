package dev.idem.spring.messaging.inboxtx;

import java.util.List;

class PostgresInboxTxTest extends InboxTxContract {
  @Override
  List<String> databaseProperties() {
    return List.of(
        "--spring.datasource.url=" + System.getProperty("idem.test.postgres.url",
            "jdbc:postgresql://127.0.0.1:5432/test"),
        "--spring.datasource.username=" + System.getProperty("idem.test.postgres.user", "postgres"),
        "--spring.datasource.password=");
  }
}
