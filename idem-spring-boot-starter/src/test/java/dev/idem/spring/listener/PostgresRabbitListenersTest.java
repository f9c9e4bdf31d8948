package dev.idem.spring.listener;

import java.util.List;

/** The listener contract with a {@code @RabbitListener} on PostgreSQL. */
class PostgresRabbitListenersTest extends RabbitListenersContract {
  @Override
  List<String> database() {
    return PostgresKafkaListenersTest.postgres();
  }

  @Override
  void dropTables() {
    PostgresKafkaListenersTest.dropTables(tables);
  }
}
