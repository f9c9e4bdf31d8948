package dev.idem.spring.method;

import java.util.List;

class MariaDbMethodCrashTest extends MethodCrashContract {
  @Override
  protected List<String> databaseProperties() {
    return List.of(
        "--spring.datasource.url=" + System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test"),
        "--spring.datasource.username=" + System.getProperty("idem.test.mariadb.user", "root"),
        "--spring.datasource.password=");
  }

  @Override
  protected String recordTable() {
    return "idem_method_crash_mariadb_record";
  }
}
