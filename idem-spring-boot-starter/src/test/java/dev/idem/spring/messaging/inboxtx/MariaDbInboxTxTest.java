package dev.idem.spring.messaging.inboxtx;

import java.util.List;

class MariaDbInboxTxTest extends InboxTxContract {
  @Override
  List<String> databaseProperties() {
    return List.of(
        "--spring.datasource.url=" + System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test"),
        "--spring.datasource.username=" + System.getProperty("idem.test.mariadb.user", "root"),
        "--spring.datasource.password=");
  }
}
