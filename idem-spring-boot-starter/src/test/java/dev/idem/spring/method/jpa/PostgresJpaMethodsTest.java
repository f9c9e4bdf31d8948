package dev.idem.spring.method.jpa;

import dev.idem.test.TestPostgres;
import java.util.List;
import org.hibernate.dialect.Dialect;
import org.hibernate.dialect.PostgreSQLDialect;

class PostgresJpaMethodsTest extends JpaMethodsContract {
  @Override
  protected List<String> databaseProperties() {
    return List.of("--spring.datasource.url=" + TestPostgres.url(),
        "--spring.datasource.username=" + TestPostgres.user(), "--spring.datasource.password=");
  }

  @Override
  protected String recordTable() {
    return "idem_jpa_record";
  }

  @Override
  protected Class<? extends Dialect> dialect() {
    return PostgreSQLDialect.class;
  }
}
