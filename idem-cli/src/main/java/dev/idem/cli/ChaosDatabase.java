package dev.idem.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The database of one {@code idem chaos} run: a PostgreSQL database of its own ({@code idem_chaos_<run>}, created
 * before the instances start and dropped at the end), or an H2 file under the run's folder. Also restarts this
 * machine's PostgreSQL cluster. Not thread-safe; used by the run's control thread.
 */
final class ChaosDatabase {
  private static final Duration PG_READY_TIMEOUT = Duration.ofSeconds(90);

  private final String adminUrl;
  private final String url;
  private final String name;

  private ChaosDatabase(String adminUrl, String url, String name) {
    this.adminUrl = adminUrl;
    this.url = url;
    this.name = name;
  }

  /** Creates the run's database: {@code CREATE DATABASE idem_chaos_<runId>} on PostgreSQL, a file path for H2. */
  static ChaosDatabase create(ChaosSettings settings, String runId, Path dir) throws SQLException {
    if (settings.isH2()) {
      String file = dir.toAbsolutePath().resolve("payments").toString();
      return new ChaosDatabase(null, "jdbc:h2:file:" + file + ";WRITE_DELAY=0;AUTO_SERVER=FALSE", file);
    }
    String name = "idem_chaos_" + runId;
    try (Connection c = DriverManager.getConnection(settings.db()); Statement st = c.createStatement()) {
      st.execute("CREATE DATABASE " + name);
    }
    return new ChaosDatabase(settings.db(), ChaosSettings.withDatabase(settings.db(), name), name);
  }

  boolean isH2() {
    return adminUrl == null;
  }

  /** The JDBC URL the instances use. */
  String url() {
    return url;
  }

  String name() {
    return name;
  }

  /** A connection for the checks (on H2 only once every instance has stopped: the file has one owner). */
  Connection connect() throws SQLException {
    return DriverManager.getConnection(url);
  }

  /** Drops the run's PostgreSQL database (closing what still uses it); H2 files stay in the run's folder. */
  void drop() throws SQLException {
    if (isH2()) {
      return;
    }
    try (Connection c = DriverManager.getConnection(adminUrl); Statement st = c.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }

  /**
   * Restarts this machine's PostgreSQL cluster that listens on the port of {@code --db} ({@code pg_ctlcluster
   * --skip-systemctl-redirect <version> <cluster> restart}, found with {@code pg_lsclusters}; else the newest version's
   * {@code main}), waits until it accepts connections again, and checks that it did restart: {@code
   * pg_postmaster_start_time()} must have changed.
   *
   * @return how long the database was unreachable, in milliseconds (from the restart to the first connection)
   * @throws IOException when the restart failed or the server's start time did not change
   */
  long restartPostgres() throws IOException, InterruptedException, SQLException {
    String[] cluster = cluster(ChaosSettings.port(adminUrl));
    String startedBefore = postmasterStartTime();
    long start = System.nanoTime();
    Process p = new ProcessBuilder("pg_ctlcluster", "--skip-systemctl-redirect", cluster[0], cluster[1], "restart")
        .redirectErrorStream(true).start();
    String command = "pg_ctlcluster " + cluster[0] + " " + cluster[1] + " restart";
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException(command + " did not finish within 120 s");
    }
    String output = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
    if (p.exitValue() != 0) {
      throw new IOException(command + " failed with status " + p.exitValue() + ": " + output);
    }
    awaitPostgres();
    long down = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    String startedAfter = postmasterStartTime();
    if (startedAfter.equals(startedBefore)) {
      throw new IOException(command + " exited 0 but the server did not restart: pg_postmaster_start_time() is still "
          + startedBefore);
    }
    return down;
  }

  /** The server's {@code pg_postmaster_start_time()}, read over the admin connection. */
  String postmasterStartTime() throws SQLException {
    try (Connection c = DriverManager.getConnection(adminUrl); Statement st = c.createStatement();
        java.sql.ResultSet rs = st.executeQuery("SELECT pg_postmaster_start_time()::text")) {
      rs.next();
      return rs.getString(1);
    }
  }

  /**
   * The (version, cluster name) that listens on {@code port} according to {@code pg_lsclusters}; else the newest
   * version's {@code main} under /etc/postgresql.
   */
  static String[] cluster(int port) throws IOException, InterruptedException {
    try {
      Process p = new ProcessBuilder("pg_lsclusters", "--no-header").redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
        for (String line : output.split("\n")) {
          String[] f = line.trim().split("\\s+");
          if (f.length >= 3 && f[2].equals(Integer.toString(port))) {
            return new String[] {f[0], f[1]};
          }
        }
      }
    } catch (IOException e) {
      // no pg_lsclusters on this machine: fall back to the newest version's main cluster
    }
    return new String[] {postgresVersion(), "main"};
  }

  /** Waits (bounded) until PostgreSQL accepts a connection and answers a query. */
  void awaitPostgres() throws SQLException {
    long deadline = System.nanoTime() + PG_READY_TIMEOUT.toNanos();
    while (true) {
      try (Connection c = DriverManager.getConnection(adminUrl); Statement st = c.createStatement()) {
        st.execute("SELECT 1");
        return;
      } catch (SQLException e) {
        if (System.nanoTime() - deadline > 0) {
          throw new SQLException("PostgreSQL did not accept connections within " + PG_READY_TIMEOUT.toSeconds()
              + " s of its restart: " + e.getMessage(), e);
        }
        LockSupport.parkNanos(Duration.ofMillis(200).toNanos());
      }
    }
  }

  /** The newest PostgreSQL version with a cluster configured under /etc/postgresql. */
  static String postgresVersion() throws IOException {
    File[] versions = new File("/etc/postgresql").listFiles(f -> new File(f, "main").isDirectory());
    if (versions == null || versions.length == 0) {
      throw new IOException("no PostgreSQL cluster under /etc/postgresql/<version>/main: cannot restart PostgreSQL"
          + " (use --pg-restart-at none)");
    }
    return Arrays.stream(versions).map(File::getName)
        .max(Comparator.comparingDouble(v -> {
          try {
            return Double.parseDouble(v);
          } catch (NumberFormatException e) {
            return -1;
          }
        })).orElseThrow();
  }
}
