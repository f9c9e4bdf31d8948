package dev.idem.spring.method;

import dev.idem.test.TestPostgres;
import java.util.List;
import java.util.UUID;

/** The {@code spring.datasource.*} arguments of the test databases, for the applications these tests start. */
public final class DataSourceArguments {
  private DataSourceArguments() {}

  /** The test PostgreSQL ({@link TestPostgres}). */
  public static List<String> postgres() {
    return List.of("--spring.datasource.url=" + TestPostgres.url(),
        "--spring.datasource.username=" + TestPostgres.user(), "--spring.datasource.password=");
  }

  /**
   * The test MariaDB, from the system properties {@code idem.test.mariadb.url} (default
   * {@code jdbc:mariadb://127.0.0.1:3306/test}) and {@code idem.test.mariadb.user} (default {@code root}), with an
   * empty password.
   */
  public static List<String> mariadb() {
    return List.of(
        "--spring.datasource.url=" + System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test"),
        "--spring.datasource.username=" + System.getProperty("idem.test.mariadb.user", "root"),
        "--spring.datasource.password=");
  }

  /** A new in-memory H2 database of the test's own, named after {@code prefix}, kept until the JVM ends. */
  public static List<String> h2InMemory(String prefix) {
    return List.of("--spring.datasource.url=jdbc:h2:mem:" + prefix + "-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
  }
}
