package dev.idem.console;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.test.TestPostgres;
import java.sql.Connection;
import java.sql.SQLException;

/** The console on PostgreSQL ({@code idem.test.postgres.url}); fails when the server is away. */
class PostgresConsoleServletTest extends ConsoleServletContract {
  @Override
  protected HikariDataSource open() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(TestPostgres.url());
    config.setUsername(TestPostgres.user());
    config.setPassword("");
    config.setMaximumPoolSize(8);
    config.setConnectionTimeout(10_000);
    try {
      HikariDataSource ds = new HikariDataSource(config);
      try (Connection c = ds.getConnection()) {
        return ds;
      }
    } catch (RuntimeException | SQLException e) {
      throw new IllegalStateException("PostgreSQL is not reachable at " + TestPostgres.url() + "; tests that need"
          + " a database never skip", e);
    }
  }

  @Override
  protected String tables() {
    return "pg";
  }
}
