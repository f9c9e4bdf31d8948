package dev.idem.spring.method;

import java.util.List;

class MariaDbMethodsTest extends MethodsContract {
  @Override
  protected List<String> databaseProperties() {
    return DataSourceArguments.mariadb();
  }
}
