package dev.idem.examples.payments.crash;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

/**
 * The kill -9 test on PostgreSQL ({@code idem.test.postgres.url}, default
 * {@code jdbc:postgresql://127.0.0.1:5432/test}, user {@code idem.test.postgres.user}, default {@code postgres},
 * password {@code idem.test.password}), in a schema of its own that the test creates and drops, so that its counts
 * are exact. A server that cannot be reached fails the test; it never skips.
 */
class KillNineRecoveryPostgresTest extends KillNineRecoveryTest {
  private final String server = System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
  private final String user = System.getProperty("idem.test.postgres.user", "postgres");
  private final String password = System.getProperty("idem.test.password", "");
  private final String schema = "pay_kill_" + run;
  private boolean created;

  @Override
  void openDatabase(Path dir) {
    execute("CREATE SCHEMA " + schema);
    created = true;
  }

  @Override
  List<String> datasourceArgs() {
    return List.of("--spring.datasource.url=" + url(), "--spring.datasource.username=" + user,
        "--spring.datasource.password=" + password);
  }

  @Override
  Connection connectAfterKill() throws SQLException {
    return connect();
  }

  @Override
  Connection connect() throws SQLException {
    return DriverManager.getConnection(url(), user, password);
  }

  @Override
  void closeDatabase() {
    if (created) {
      execute("DROP SCHEMA " + schema + " CASCADE");
    }
  }

  @Override
  String databaseName() {
    return "PostgreSQL";
  }

  private String url() {
    return server + (server.contains("?") ? "&" : "?") + "currentSchema=" + schema;
  }

  private void execute(String sql) {
    try (Connection c = DriverManager.getConnection(server, user, password); Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot run '" + sql + "' on " + server + " as " + user + " (is the server"
          + " running? this test never skips): " + e.getMessage(), e);
    }
  }
}
