package dev.idem.examples.payments;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;

/**
 * A schema (PostgreSQL) or database (MariaDB) created for one test class on a shared server, and dropped after it:
 * runs never see each other's rows, and nothing else on the server sees theirs. A server that cannot be reached
 * fails the test.
 */
public final class DatabaseOfItsOwn implements AutoCloseable {
  private final String serverUrl;
  private final String user;
  private final String name;
  private final String jdbcUrl;

  private DatabaseOfItsOwn(String serverUrl, String user, String name, String jdbcUrl) {
    this.serverUrl = serverUrl;
    this.user = user;
    this.name = name;
    this.jdbcUrl = jdbcUrl;
  }

  /** A fresh PostgreSQL schema on {@code idem.test.postgres.url}; the URL selects it as the current schema. */
  public static DatabaseOfItsOwn postgres() {
    String server = System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
    String user = System.getProperty("idem.test.postgres.user", "postgres");
    String schema = "pay_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    execute(server, user, "CREATE SCHEMA " + schema);
    String url = server + (server.contains("?") ? "&" : "?") + "currentSchema=" + schema;
    return new DatabaseOfItsOwn(server, user, schema, url);
  }

  /** A fresh MariaDB database on the server of {@code idem.test.mariadb.url}. */
  static DatabaseOfItsOwn mariadb() {
    return mariadb("utf8mb4_bin");
  }

  /** A fresh MariaDB database whose default collation is case- and pad-insensitive, as servers usually have. */
  public static DatabaseOfItsOwn mariadbCaseInsensitive() {
    // the server's usual default collation: Idem's own tables must not depend on it
    return mariadb("utf8mb4_general_ci");
  }

  private static DatabaseOfItsOwn mariadb(String collation) {
    String server = System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test");
    String user = System.getProperty("idem.test.mariadb.user", "root");
    String database = "pay_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    execute(server, user, "CREATE DATABASE " + database + " CHARACTER SET utf8mb4 COLLATE " + collation);
    int slash = server.indexOf('/', "jdbc:mariadb://".length());
    int query = server.indexOf('?', slash);
    String url = server.substring(0, slash + 1) + database + (query < 0 ? "" : server.substring(query));
    return new DatabaseOfItsOwn(server, user, database, url);
  }

  String jdbcUrl() {
    return jdbcUrl;
  }

  String user() {
    return user;
  }

  /** The service's arguments that select this database. */
  public List<String> arguments() {
    return List.of("--spring.datasource.url=" + jdbcUrl, "--spring.datasource.username=" + user);
  }

  @Override
  public void close() {
    execute(serverUrl, user, serverUrl.startsWith("jdbc:postgresql") ? "DROP SCHEMA " + name + " CASCADE"
        : "DROP DATABASE " + name);
  }

  private static void execute(String url, String user, String sql) {
    try (Connection c = DriverManager.getConnection(url, user, System.getProperty("idem.test.password", ""));
        Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot run '" + sql + "' on " + url + " as " + user + " (is the server"
          + " running? tests never skip): " + e.getMessage(), e);
    }
  }
}
