package dev.idem.spring.method;

import java.util.List;

class MariaDbMethodCrashTest extends MethodCrashContract {
  @Override
  protected List<String> databaseProperties() {
    return DataSourceArguments.mariadb();
  }

  @Override
  protected String recordTable() {
    return "idem_method_crash_mariadb_record";
  }
}
