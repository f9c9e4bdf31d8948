package dev.idem.spring.events;

import java.util.List;
import java.util.UUID;

class H2EventsStarterTest extends EventsStarterTest {
  @Override
  List<String> databaseProperties() {
    return List.of("--spring.datasource.url=jdbc:h2:mem:events-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
  }
}
