package dev.idem.spring.messaging.inboxtx;

import java.util.List;
import java.util.UUID;

class H2InboxTxTest extends InboxTxContract {
  @Override
  List<String> databaseProperties() {
    return List.of("--spring.datasource.url=jdbc:h2:mem:inboxtx-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
  }
}
