package dev.idem.bench.outbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/** What the outbox benchmarks share: flags, pools, fresh tables, events, CPU time from {@code /proc}. */
public final class BenchSupport {
  private BenchSupport() {}

  /** {@code --name value} pairs; a flag without a value (the last one, or followed by another flag) is "true". */
  public static Map<String, String> flags(String[] args) {
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --flag, got '" + args[i] + "'");
      }
      String name = args[i].substring(2);
      if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
        out.put(name, args[++i]);
      } else {
        out.put(name, "true");
      }
    }
    return out;
  }

  static int[] ints(String csv) {
    return Arrays.stream(csv.split(",")).map(String::trim).filter(s -> !s.isEmpty()).mapToInt(Integer::parseInt)
        .toArray();
  }

  static String postgresUrl(Map<String, String> f) {
    return f.getOrDefault("url", System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test"));
  }

  static String postgresUser(Map<String, String> f) {
    return f.getOrDefault("user", System.getProperty("idem.test.postgres.user", "postgres"));
  }

  static String mariadbUrl(Map<String, String> f) {
    return f.getOrDefault("mariadb-url", System.getProperty("idem.test.mariadb.url",
        "jdbc:mariadb://127.0.0.1:3306/test"));
  }

  static String mariadbUser(Map<String, String> f) {
    return f.getOrDefault("mariadb-user", System.getProperty("idem.test.mariadb.user", "root"));
  }

  /** A pool of {@code size} connections, all opened now. */
  static HikariDataSource pool(String url, String user, int size, String name, Map<String, String> properties) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setPassword("");
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(size);
    config.setConnectionTimeout(10_000);
    config.setPoolName(name);
    properties.forEach(config::addDataSourceProperty);
    try {
      HikariDataSource ds = new HikariDataSource(config);
      try (Connection c = ds.getConnection()) {
        c.isValid(5);
      }
      return ds;
    } catch (RuntimeException | SQLException e) {
      throw new IllegalStateException("the database is not reachable at " + url + " as " + user, e);
    }
  }

  /** A table name no other run uses: {@code <prefix>_<6 hex digits>}. */
  static String uniqueTable(String prefix) {
    return prefix + "_" + Long.toHexString(0x1000000L | ThreadLocalRandom.current().nextLong(0xffffffL)).substring(1);
  }

  /** Creates the outbox table, its attempt history and a private inbox table ({@code <table>_in}). */
  static void createTables(HikariDataSource ds, JdbcDialect dialect, String table) throws SQLException {
    Outbox.builder(JdbcOutboxStore.builder(ds).dialect(dialect).table(table).createSchemaIfMissing(true).build())
        .build();
    Inbox.builder(JdbcInboxStore.builder(ds).dialect(dialect).table(table + "_in").createSchemaIfMissing(true)
        .build()).build();
  }

  static void dropTables(HikariDataSource ds, String table) {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table + "_attempt");
      st.execute("DROP TABLE IF EXISTS " + table);
      st.execute("DROP TABLE IF EXISTS " + table + "_in");
    } catch (SQLException | RuntimeException e) {
      System.err.println("could not drop " + table + ": " + e.getMessage());
    }
  }

  /** A typical event: about {@code payloadBytes} of JSON, unordered, to the benchmark's sink route. */
  static OutboxEvent event(long n, int payloadBytes, String extraJson) {
    StringBuilder json = new StringBuilder(payloadBytes + 64);
    json.append("{\"n\":").append(n);
    if (extraJson != null) {
      json.append(',').append(extraJson);
    }
    json.append(",\"pad\":\"");
    while (json.length() < payloadBytes - 2) {
      json.append('x');
    }
    json.append("\"}");
    return OutboxEvent.builder("order.created").aggregate("order", "o-" + n).payload(json.toString())
        .destination("sink:bench").build();
  }

  static String scalar(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      return rs.next() ? rs.getString(1) : null;
    }
  }

  static List<String> lines(Connection c, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= n; i++) {
          b.append(i > 1 ? " | " : "").append(rs.getString(i));
        }
        out.add(b.toString());
      }
    }
    return out;
  }

  /** The first line of {@code /proc/loadavg}, or "?". */
  public static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (Exception e) {
      return "?";
    }
  }

  static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    int n = v.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  static double min(double[] v) {
    return Arrays.stream(v).min().orElse(Double.NaN);
  }

  static double max(double[] v) {
    return Arrays.stream(v).max().orElse(Double.NaN);
  }

  /** {@link String#format} in {@link Locale#ROOT}. */
  public static String fmt(String pattern, Object... args) {
    return String.format(Locale.ROOT, pattern, args);
  }

  /** CPU time from {@code /proc}, in clock ticks (USER_HZ, 100 on Linux): this JVM, and every postgres process. */
  public static final class Cpu {
    private Cpu() {}

    static long self() {
      return processTicks(ProcessHandle.current().pid());
    }

    /** The user and system CPU ticks so far of process {@code pid}, or 0 when they cannot be read. */
    public static long processTicks(long pid) {
      try {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
      } catch (Exception e) {
        return 0;
      }
    }

    /** Total CPU ticks of every process whose command name is {@code name}. */
    public static long ticksOf(String name) {
      long total = 0;
      try (var dirs = Files.list(Path.of("/proc"))) {
        for (Path p : (Iterable<Path>) dirs::iterator) {
          String pid = p.getFileName().toString();
          if (!pid.chars().allMatch(Character::isDigit)) {
            continue;
          }
          try {
            String stat = Files.readString(p.resolve("stat"));
            String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
            if (comm.equals(name)) {
              total += processTicks(Long.parseLong(pid));
            }
          } catch (Exception ignored) {
            // the process ended
          }
        }
      } catch (Exception ignored) {
        // no /proc
      }
      return total;
    }

    static double ticksToMicros(long ticks) {
      return ticks * 10_000.0;
    }
  }
}
