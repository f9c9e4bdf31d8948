package dev.idem.spring.method;

class MariaDbMethodsTest extends MethodsContract {
  @Override
  protected String[] databaseProperties() {
    return new String[] {
        "--spring.datasource.url=" + System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test"),
        "--spring.datasource.username=" + System.getProperty("idem.test.mariadb.user", "root"),
        "--spring.datasource.password="};
  }
}
