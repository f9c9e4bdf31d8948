package dev.idem.examples.payments;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/** The API contract on a fresh H2 file database, with the default test keys (alice and bob). */
class H2PaymentsServiceTest extends PaymentsServiceContract {
  @TempDir
  static Path data;

  @BeforeAll
  void start() {
    service = RunningService.start(args(
        "--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE"));
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  @Override
  Caller alice() {
    return new Caller("sk_test_alice", "alice");
  }

  @Override
  Caller bob() {
    return new Caller("sk_test_bob", "bob");
  }
}
