package dev.idem.bench.outbox;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * A DataSource wrapper that counts and times every JDBC call that may reach the database (statement executions by
 * SQL text, commit, rollback, isolation and auto-commit calls, borrowing from the pool), to see where a relay cycle
 * spends its time. It adds a little overhead, so profiled runs are not part of the throughput comparison.
 */
final class JdbcProfile {
  private static final Set<String> CONNECTION_CALLS = Set.of("commit", "rollback", "getTransactionIsolation",
      "setTransactionIsolation", "setAutoCommit", "getAutoCommit", "close");
  private static final Set<String> EXECUTIONS = Set.of("execute", "executeQuery", "executeUpdate", "executeBatch",
      "executeLargeUpdate", "executeLargeBatch");

  private final Map<String, LongAdder[]> calls = new ConcurrentHashMap<>();
  private final String table;

  JdbcProfile(String table) {
    this.table = table;
  }

  DataSource wrap(DataSource ds) {
    return (DataSource) Proxy.newProxyInstance(JdbcProfile.class.getClassLoader(), new Class<?>[] {DataSource.class},
        (proxy, m, args) -> {
          if (m.getName().equals("getConnection")) {
            long t0 = System.nanoTime();
            Connection c = (Connection) invoke(ds, m, args);
            record("pool: getConnection", t0);
            return connection(c);
          }
          return invoke(ds, m, args);
        });
  }

  void reset() {
    calls.clear();
  }

  private Connection connection(Connection c) {
    InvocationHandler h = (proxy, m, args) -> {
      String name = m.getName();
      if ((name.equals("prepareStatement")) && args != null && args[0] instanceof String) {
        PreparedStatement ps = (PreparedStatement) invoke(c, m, args);
        return statement(ps, (String) args[0]);
      }
      if (name.equals("createStatement")) {
        Statement st = (Statement) invoke(c, m, args);
        return statement(st, null);
      }
      if (CONNECTION_CALLS.contains(name)) {
        long t0 = System.nanoTime();
        Object r = invoke(c, m, args);
        record("conn: " + name + (args != null && args.length == 1 ? "(" + args[0] + ")" : "()"), t0);
        return r;
      }
      return invoke(c, m, args);
    };
    return (Connection) Proxy.newProxyInstance(JdbcProfile.class.getClassLoader(), new Class<?>[] {Connection.class}, h);
  }

  private Object statement(Statement st, String sql) {
    Class<?> type = st instanceof PreparedStatement ? PreparedStatement.class : Statement.class;
    InvocationHandler h = (proxy, m, args) -> {
      if (EXECUTIONS.contains(m.getName())) {
        String text = sql != null ? sql : args != null && args.length > 0 ? String.valueOf(args[0]) : "?";
        long t0 = System.nanoTime();
        Object r = invoke(st, m, args);
        record("sql: " + label(text), t0);
        return r;
      }
      return invoke(st, m, args);
    };
    return Proxy.newProxyInstance(JdbcProfile.class.getClassLoader(), new Class<?>[] {type}, h);
  }

  private String label(String sql) {
    String s = sql.replace(table, "T").replaceAll("\\?(, \\?)+", "?,..").replaceAll("\\s+", " ");
    return s.length() > 90 ? s.substring(0, 90) + "..." : s;
  }

  private void record(String key, long t0) {
    long nanos = System.nanoTime() - t0;
    LongAdder[] a = calls.computeIfAbsent(key, k -> new LongAdder[] {new LongAdder(), new LongAdder()});
    a[0].increment();
    a[1].add(nanos);
  }

  private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** A markdown table: call, count, count per batch, total ms, microseconds per call, share of the wall time. */
  List<String> report(long batches, double wallSeconds, int threads) {
    List<String> out = new ArrayList<>();
    out.add("| JDBC call | calls | per batch | total ms | us/call | share of thread time |");
    out.add("| --- | ---: | ---: | ---: | ---: | ---: |");
    calls.entrySet().stream()
        .sorted((a, b) -> Long.compare(b.getValue()[1].sum(), a.getValue()[1].sum()))
        .forEach(e -> {
          long n = e.getValue()[0].sum();
          long ns = e.getValue()[1].sum();
          out.add(BenchSupport.fmt("| `%s` | %d | %.2f | %.0f | %.0f | %.1f%% |", e.getKey().replace("|", "/"), n,
              batches == 0 ? 0.0 : (double) n / batches, ns / 1e6, ns / 1e3 / Math.max(1, n),
              100.0 * ns / 1e9 / (wallSeconds * threads)));
        });
    return out;
  }
}
