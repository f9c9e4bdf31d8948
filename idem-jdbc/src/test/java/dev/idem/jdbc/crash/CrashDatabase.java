package dev.idem.jdbc.crash;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * Where a crash test and its child JVM meet: a database both open by URL. PostgreSQL and MariaDB come from the same
 * system properties (and defaults) as the other JDBC tests and must be reachable: a test that cannot connect fails, it
 * never skips. H2 is a file database under {@code target/}, so that the parent can open it after the child died.
 *
 * @param dialect the database
 * @param url its JDBC URL
 * @param user the user name (the password is empty)
 */
record CrashDatabase(JdbcDialect dialect, String url, String user) {

  static CrashDatabase postgres() {
    return new CrashDatabase(JdbcDialect.POSTGRESQL,
        System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test"),
        System.getProperty("idem.test.postgres.user", "postgres"));
  }

  static CrashDatabase mariadb() {
    return new CrashDatabase(JdbcDialect.MARIADB,
        System.getProperty("idem.test.mariadb.url", "jdbc:mariadb://127.0.0.1:3306/test"),
        System.getProperty("idem.test.mariadb.user", "root"));
  }

  /**
   * A new H2 file database in {@code directory}. {@code WRITE_DELAY=0} makes every commit reach the file at once; with
   * H2's default delay a commit may still sit in memory when the process is killed, and a killed child would lose it.
   */
  static CrashDatabase h2File(Path directory) {
    try {
      Files.createDirectories(directory);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Path base = directory.toAbsolutePath().resolve("db-" + UUID.randomUUID());
    return new CrashDatabase(JdbcDialect.H2, "jdbc:h2:file:" + base + ";WRITE_DELAY=0", "sa");
  }

  /** The program arguments that {@link #fromArgs} reads back in the child. */
  List<String> toArgs() {
    return List.of(dialect.name(), url, user);
  }

  static CrashDatabase fromArgs(String[] args, int from) {
    return new CrashDatabase(JdbcDialect.valueOf(args[from]), args[from + 1], args[from + 2]);
  }

  /** A small pool, checked with one connection; fails with a clear message when the database is not reachable. */
  HikariDataSource open(String poolName) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword("");
    config.setMaximumPoolSize(4);
    config.setConnectionTimeout(10_000);
    config.setPoolName(poolName + "-" + dialect.name().toLowerCase(Locale.ROOT));
    try {
      HikariDataSource ds = new HikariDataSource(config);
      try (Connection c = ds.getConnection()) {
        c.isValid(5);
      }
      return ds;
    } catch (RuntimeException | SQLException e) {
      throw new IllegalStateException(dialect + " is not reachable at " + url + " as " + user
          + ". Start it (bash .ci/run does) and run the tests again; tests that need a database never skip.", e);
    }
  }

  /** Deletes the files of an H2 file database (call after every pool on it is closed); nothing for servers. */
  void deleteFiles() throws IOException {
    if (dialect != JdbcDialect.H2) {
      return;
    }
    String path = url.substring("jdbc:h2:file:".length());
    Path base = Path.of(path.contains(";") ? path.substring(0, path.indexOf(';')) : path);
    try (DirectoryStream<Path> files =
        Files.newDirectoryStream(base.getParent(), base.getFileName() + ".*")) {
      for (Path file : files) {
        Files.deleteIfExists(file);
      }
    }
  }
}
