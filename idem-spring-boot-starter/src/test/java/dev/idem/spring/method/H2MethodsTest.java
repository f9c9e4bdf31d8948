package dev.idem.spring.method;

import java.util.UUID;

class H2MethodsTest extends MethodsContract {
  @Override
  protected String[] databaseProperties() {
    return new String[] {"--spring.datasource.url=jdbc:h2:mem:methods-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1"};
  }
}
