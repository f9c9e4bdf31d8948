package dev.idem.servlet;

class PostgresHttpContractTest extends HttpContractTest {
  @Override
  protected String database() {
    return TestService.DB_POSTGRES;
  }
}
