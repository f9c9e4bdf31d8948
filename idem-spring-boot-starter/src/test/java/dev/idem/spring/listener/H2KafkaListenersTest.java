package dev.idem.spring.listener;

import java.util.List;

/** The listener contract with a {@code @KafkaListener} on an in-memory H2 database, gone with the application. */
class H2KafkaListenersTest extends KafkaListenersContract {
  @Override
  List<String> database() {
    return List.of("spring.datasource.url=jdbc:h2:mem:" + tables);
  }

  @Override
  void dropTables() {
    // the in-memory database closes with the application's last connection
  }
}
