package dev.idem.servlet;

/** On PostgreSQL and Tomcat. */
class PostgresUnstorableTextTest extends UnstorableTextTest {
  PostgresUnstorableTextTest() {
    super(TestService.DB_POSTGRES, TestService.TOMCAT);
  }
}
