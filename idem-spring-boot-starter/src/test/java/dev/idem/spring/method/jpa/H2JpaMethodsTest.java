package dev.idem.spring.method.jpa;

import dev.idem.spring.method.DataSourceArguments;
import java.util.List;
import org.hibernate.dialect.Dialect;
import org.hibernate.dialect.H2Dialect;

class H2JpaMethodsTest extends JpaMethodsContract {
  @Override
  protected List<String> databaseProperties() {
    return DataSourceArguments.h2InMemory("jpa-methods");
  }

  @Override
  protected String recordTable() {
    return "idem_jpa_h2_record";
  }

  @Override
  protected Class<? extends Dialect> dialect() {
    return H2Dialect.class;
  }
}
