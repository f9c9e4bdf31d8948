package dev.idem.spring.listener;

import dev.idem.test.TestPostgres;
import java.util.List;

/** The listener contract with a {@code @KafkaListener} on PostgreSQL. */
class PostgresKafkaListenersTest extends KafkaListenersContract {
  @Override
  List<String> database() {
    return postgres();
  }

  static List<String> postgres() {
    return List.of("spring.datasource.url=" + TestPostgres.url(), "spring.datasource.username=" + TestPostgres.user(),
        "spring.datasource.password=");
  }

  @Override
  void dropTables() {
    dropTables(tables);
  }

  /** Drops the tables an application of {@link ListenersContract#arguments} made under {@code tables}. */
  static void dropTables(String tables) {
    TestPostgres.drop(tables + "_fx", tables + "_ib", tables + "_ob_attempt", tables + "_ob");
  }
}
