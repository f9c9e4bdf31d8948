package dev.idem.spring.method;

class PostgresMethodsTest extends MethodsContract {
  @Override
  protected String[] databaseProperties() {
    return new String[] {
        "--spring.datasource.url=" + System.getProperty("idem.test.postgres.url",
            "jdbc:postgresql://127.0.0.1:5432/test"),
        "--spring.datasource.username=" + System.getProperty("idem.test.postgres.user", "postgres"),
        "--spring.datasource.password="};
  }
}
