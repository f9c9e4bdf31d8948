package dev.idem.spring.listener;

import dev.idem.test.TestPostgres;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The listener contract with a {@code @KafkaListener} on PostgreSQL. */
class PostgresKafkaListenersTest extends KafkaListenersContract {
  String url = TestPostgres.url();

  @Override
  List<String> database() {
    return postgres(url);
  }

  static List<String> postgres() {
    return postgres(TestPostgres.url());
  }

  static List<String> postgres(String url) {
    return List.of("spring.datasource.url=" + url, "spring.datasource.username=" + TestPostgres.user(),
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

  @Test
  void whileTheDatabaseIsAwayTheListenerPausesAndGivesNothingUp() throws Exception {
    whileTheDatabaseIsAwayTheListenerPausesAndGivesNothingUp(jdbcUrl -> url = jdbcUrl);
  }
}
