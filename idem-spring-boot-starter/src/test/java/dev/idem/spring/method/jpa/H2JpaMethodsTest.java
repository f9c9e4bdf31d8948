package dev.idem.spring.method.jpa;

import java.util.List;
import java.util.UUID;
import org.hibernate.dialect.Dialect;
import org.hibernate.dialect.H2Dialect;

class H2JpaMethodsTest extends JpaMethodsContract {
  @Override
  protected List<String> databaseProperties() {
    return List.of("--spring.datasource.url=jdbc:h2:mem:jpa-methods-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
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
