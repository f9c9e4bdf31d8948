package dev.idem.examples.payments;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The API contract on MariaDB ({@code idem.test.mariadb.url}, user {@code idem.test.mariadb.user}), in a database
 * of its own, with tenants and keys unique to the run.
 */
class MariaDbPaymentsServiceTest extends PaymentsServiceContract {
  private final String run = suffix();
  private DatabaseOfItsOwn database;

  @BeforeAll
  void start() {
    database = DatabaseOfItsOwn.mariadb();
    service = RunningService.start(args(
        "--spring.datasource.url=" + database.jdbcUrl(),
        "--spring.datasource.username=" + database.user(),
        "--payments.api-keys.sk_alice_" + run + "=alice_" + run,
        "--payments.api-keys.sk_bob_" + run + "=bob_" + run));
  }

  @AfterAll
  void stop() {
    try {
      if (service != null) {
        service.close();
      }
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }

  @Override
  Caller alice() {
    return new Caller("sk_alice_" + run, "alice_" + run);
  }

  @Override
  Caller bob() {
    return new Caller("sk_bob_" + run, "bob_" + run);
  }
}
