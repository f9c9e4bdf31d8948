package dev.idem.console;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.UUID;

/** The console on an in-memory H2 database. */
class H2ConsoleServletTest extends ConsoleServletContract {
  @Override
  protected HikariDataSource open() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl("jdbc:h2:mem:console-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    config.setUsername("sa");
    config.setPassword("");
    config.setMaximumPoolSize(8);
    return new HikariDataSource(config);
  }

  @Override
  protected String tables() {
    return "h2";
  }
}
