package dev.idem.spring.listener;

import dev.idem.test.TestPostgres;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The listener contract with a {@code @RabbitListener} on PostgreSQL. */
class PostgresRabbitListenersTest extends RabbitListenersContract {
  private String url = TestPostgres.url();

  @Override
  List<String> database() {
    return PostgresKafkaListenersTest.postgres(url);
  }

  @Override
  void dropTables() {
    PostgresKafkaListenersTest.dropTables(tables);
  }

  @Test
  void whileTheDatabaseIsAwayTheListenerPausesAndGivesNothingUp() throws Exception {
    whileTheDatabaseIsAwayTheListenerPausesAndGivesNothingUp(jdbcUrl -> url = jdbcUrl);
  }
}
