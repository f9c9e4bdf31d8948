package dev.idem.spring.listener;

import dev.idem.test.TestPostgres;
import java.util.List;

/** The listener contract with a {@code @RabbitListener} on PostgreSQL. */
class PostgresRabbitListenersTest extends RabbitListenersContract {
  @Override
  List<String> database() {
    return PostgresKafkaListenersTest.postgres();
  }

  @Override
  void dropTables() {
    TestPostgres.drop(tables + "_fx", tables + "_ib", tables + "_ob_attempt", tables + "_ob");
  }
}
