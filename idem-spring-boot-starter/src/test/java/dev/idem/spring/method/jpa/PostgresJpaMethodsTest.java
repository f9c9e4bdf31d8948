package dev.idem.spring.method.jpa;

import dev.idem.spring.method.DataSourceArguments;
import java.util.List;
import org.hibernate.dialect.Dialect;
import org.hibernate.dialect.PostgreSQLDialect;

class PostgresJpaMethodsTest extends JpaMethodsContract {
  @Override
  protected List<String> databaseProperties() {
    return DataSourceArguments.postgres();
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
