package dev.idem.spring.method;

import java.util.List;

class PostgresMethodCrashTest extends MethodCrashContract {
  @Override
  protected List<String> databaseProperties() {
    return DataSourceArguments.postgres();
  }

  @Override
  protected String recordTable() {
    return "idem_method_crash_record";
  }
}
