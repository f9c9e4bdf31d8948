package dev.idem.spring.method.jpa;

import dev.idem.spring.method.DataSourceArguments;
import java.util.List;
import org.hibernate.dialect.Dialect;
import org.hibernate.dialect.MariaDBDialect;

class MariaDbJpaMethodsTest extends JpaMethodsContract {
  @Override
  protected List<String> databaseProperties() {
    return DataSourceArguments.mariadb();
  }

  @Override
  protected String recordTable() {
    return "idem_jpa_mariadb_record";
  }

  @Override
  protected Class<? extends Dialect> dialect() {
    return MariaDBDialect.class;
  }
}
