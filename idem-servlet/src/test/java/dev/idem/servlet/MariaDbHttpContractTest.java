package dev.idem.servlet;

class MariaDbHttpContractTest extends HttpContractTest {
  @Override
  protected String database() {
    return TestService.DB_MARIADB;
  }
}
