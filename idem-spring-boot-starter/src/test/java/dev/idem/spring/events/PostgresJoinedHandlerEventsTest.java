package dev.idem.spring.events;

import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

class PostgresJoinedHandlerEventsTest extends JoinedHandlerEventsTest {
  @Override
  DataSource dataSource() {
    return new DriverManagerDataSource(System.getProperty("idem.test.postgres.url",
        "jdbc:postgresql://127.0.0.1:5432/test"), System.getProperty("idem.test.postgres.user", "postgres"), "");
  }
}
