package dev.idem.spring.method;

import java.util.List;

class H2MethodsTest extends MethodsContract {
  @Override
  protected List<String> databaseProperties() {
    return DataSourceArguments.h2InMemory("methods");
  }
}
