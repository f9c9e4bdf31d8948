package dev.idem.spring.method;

import dev.idem.test.TestPostgres;
import java.util.List;

class PostgresMethodCrashTest extends MethodCrashContract {
  @Override
  protected List<String> databaseProperties() {
    return List.of("--spring.datasource.url=" + TestPostgres.url(),
        "--spring.datasource.username=" + TestPostgres.user(), "--spring.datasource.password=");
  }

  @Override
  protected String recordTable() {
    return "idem_method_crash_record";
  }
}
