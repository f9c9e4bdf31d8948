package dev.idem.spring.method.jpa;

import java.util.List;
import org.hibernate.dialect.Dialect;
import org.hibernate.dialect.MariaDBDialect;

class MariaDbJpaMethodsTest extends JpaMethodsContract {
  @Override
  protected List<String> databaseProperties() {
    return List.of(
        "--spring.datasource.url=" + System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test"),
        "--spring.datasource.username=" + System.getProperty("idem.test.mariadb.user", "root"),
        "--spring.datasource.password=");
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
