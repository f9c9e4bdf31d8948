package dev.idem.examples.orders;

import java.util.List;

/** The order service on an in-memory H2 database, as it runs locally by default (there on a file). */
class H2OrdersServiceTest extends OrdersServiceContract {
  @Override
  protected List<String> createDatabase() {
    return List.of("--spring.datasource.url=jdbc:h2:mem:orders_" + suffix + ";DB_CLOSE_DELAY=-1");
  }

  @Override
  protected void dropDatabase() {
    // the in-memory database goes with the JVM
  }
}
