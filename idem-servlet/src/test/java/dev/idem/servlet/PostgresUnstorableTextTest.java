package dev.idem.servlet;

/** On PostgreSQL and Tomcat. */
class PostgresUnstorableTextTest extends UnstorableTextTest {
  @Override
  protected String database() {
    return TestService.DB_POSTGRES;
  }

  @Override
  protected String container() {
    return TestService.TOMCAT;
  }
}
