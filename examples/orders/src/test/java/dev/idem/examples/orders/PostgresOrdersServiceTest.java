package dev.idem.examples.orders;

import dev.idem.test.TestPostgres;
import java.util.List;

/** The order service on the local PostgreSQL, in a schema of its own, dropped afterwards. */
class PostgresOrdersServiceTest extends OrdersServiceContract {
  private final String schema = "orders_test_" + suffix;

  @Override
  protected List<String> createDatabase() {
    TestPostgres.execute("CREATE SCHEMA " + schema);
    String url = TestPostgres.url();
    return List.of("--spring.datasource.url=" + url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema,
        "--spring.datasource.username=" + TestPostgres.user(), "--spring.datasource.password=");
  }

  @Override
  protected void dropDatabase() {
    TestPostgres.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
  }
}
