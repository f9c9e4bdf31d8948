package dev.idem.examples.payments;

import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The console's routes on an in-memory H2 database. */
class ConsoleRoutesTest extends ConsoleRoutesContract {
  @BeforeAll
  void start() {
    service = RunningService.start(
        "--spring.datasource.url=jdbc:h2:mem:console-routes-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }
}
