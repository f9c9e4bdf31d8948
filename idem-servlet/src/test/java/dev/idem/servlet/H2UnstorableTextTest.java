package dev.idem.servlet;

/** On H2 and Jetty. */
class H2UnstorableTextTest extends UnstorableTextTest {
  @Override
  protected String database() {
    return TestService.DB_H2;
  }
}
