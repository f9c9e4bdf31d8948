package dev.idem.servlet;

class H2HttpContractTest extends HttpContractTest {
  @Override
  protected String database() {
    return TestService.DB_H2;
  }
}
