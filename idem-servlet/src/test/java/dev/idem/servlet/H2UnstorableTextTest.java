package dev.idem.servlet;

/** On H2 and Jetty. */
class H2UnstorableTextTest extends UnstorableTextTest {
  H2UnstorableTextTest() {
    super(TestService.DB_H2, TestService.JETTY);
  }
}
