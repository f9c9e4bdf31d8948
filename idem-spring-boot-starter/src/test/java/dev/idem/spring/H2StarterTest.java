package dev.idem.spring;

import java.util.UUID;

class H2StarterTest extends StarterTest {
  @Override
  protected String[] databaseProperties() {
    return new String[] {"--spring.datasource.url=jdbc:h2:mem:starter-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1"};
  }
}
