package dev.idem.bench.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Codec;
import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentCall;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.StoredResponse;
import dev.idem.core.UuidV7;
import dev.idem.jdbc.JdbcIdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * An idempotent method on PostgreSQL, side by side with the bare method in one run: a plain Java method that inserts
 * one row in a transaction and returns a value, called bare (a), through the typed call API in atomic mode with a
 * new key (b: the record is written in the method's transaction; b2: the same without the look-up before the work,
 * {@code OperationPolicy.lookupFirst(false)}), through the call API with a key already answered (c: the replay,
 * decoded, without running the method; c2: the same without the look-up, which runs the method, collides with the
 * first call's order row, rolls back and replays; b3 and c3: a first call that says it is the caller's first attempt,
 * which skips the look-up, and a retry that says it is the second, which looks up first), and through the engine's
 * own {@code Idem.atomic} with a hand-made {@code StoredResponse} (e: what the typed API adds is (b) / (e)). Variants alternate within each pass; the ratios
 * are per pass (adjacent runs), reported as their median.
 *
 * <pre>java -cp idem-bench/target/benchmarks.jar dev.idem.bench.db.MethodCallBench --threads 8 --seconds 4 --passes 3
 *     [--url jdbc:postgresql://127.0.0.1:5432/test --user postgres]</pre>
 */
public final class MethodCallBench {
  private static final String SCOPE = "bench-method";
  private static final String OPERATION = "OrderService#place";
  private static final String NO_LOOKUP = "OrderService#placeNoLookup";

  /** What the method returns. */
  record Receipt(String id, long amount) {}

  /** A hand-written codec, so that the figures hold no serialisation library's cost. */
  private static final Codec<Receipt> RECEIPTS = new Codec<>() {
    @Override
    public String contentType() {
      return "text/plain";
    }

    @Override
    public byte[] encode(Receipt r) {
      return (r.id() + "|" + r.amount()).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public Receipt decode(byte[] bytes) {
      String s = new String(bytes, StandardCharsets.UTF_8);
      int bar = s.indexOf('|');
      return new Receipt(s.substring(0, bar), Long.parseLong(s.substring(bar + 1)));
    }
  };

  private final HikariDataSource ds;
  private final Idem idem;
  private final int threads;
  private final int seconds;
  private final List<String> answered = new ArrayList<>();
  private final PgCounters counters;

  private MethodCallBench(String url, String user, int threads, int seconds) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setMaximumPoolSize(threads);
    config.setMinimumIdle(threads);
    config.setPoolName("bench-method");
    this.ds = new HikariDataSource(config);
    this.counters = new PgCounters(ds, threads);
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(ds).name("bench").createSchemaIfMissing(true).build();
    this.idem = Idem.builder().name("bench-method").store(store)
        .policy(NO_LOOKUP, OperationPolicy.builder().lookupFirst(false).build()).build();
    this.threads = threads;
    this.seconds = seconds;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    int threads = Integer.parseInt(opts.getOrDefault("threads", "8"));
    int seconds = Integer.parseInt(opts.getOrDefault("seconds", "4"));
    int passes = Integer.parseInt(opts.getOrDefault("passes", "3"));
    String url = opts.getOrDefault("url", "jdbc:postgresql://127.0.0.1:5432/test");
    MethodCallBench bench = new MethodCallBench(url, opts.getOrDefault("user", "postgres"), threads, seconds);
    bench.prepare();
    System.out.printf(Locale.ROOT, "# an idempotent method on %s, %d threads, %d s per measurement, %d passes%n",
        url, threads, seconds, passes);
    Map<String, Op> variants = new LinkedHashMap<>();
    variants.put("a bare method", bench::bare);
    variants.put("b call, new key", () -> bench.firstCall(OPERATION, 0));
    variants.put("b2 call, new key, no look-up", () -> bench.firstCall(NO_LOOKUP, 0));
    variants.put("b3 call, new key, attempt 1", () -> bench.firstCall(OPERATION, 1));
    variants.put("c call, replay", () -> bench.replay(OPERATION, 0));
    variants.put("c2 call, replay, no look-up", () -> bench.replay(NO_LOOKUP, 0));
    variants.put("c3 call, replay, attempt 2", () -> bench.replay(OPERATION, 2));
    variants.put("e Idem.atomic, new key", bench::engine);
    for (Map.Entry<String, Op> v : variants.entrySet()) {
      bench.measure(v.getKey() + " (priming, discarded)", v.getValue());
    }
    Map<String, List<double[]>> results = new LinkedHashMap<>();
    for (int pass = 1; pass <= passes; pass++) {
      for (Map.Entry<String, Op> v : variants.entrySet()) {
        results.computeIfAbsent(v.getKey(), k -> new ArrayList<>())
            .add(bench.measure(v.getKey() + ", pass " + pass, v.getValue()));
      }
    }
    System.out.println();
    System.out.println("| ratio | per pass | median | CPU us/op (client+db), numerator / denominator |");
    System.out.println("| --- | --- | --- | --- |");
    compare(results, "b call, new key", "a bare method");
    compare(results, "b2 call, new key, no look-up", "a bare method");
    compare(results, "b3 call, new key, attempt 1", "a bare method");
    compare(results, "c call, replay", "a bare method");
    compare(results, "c2 call, replay, no look-up", "a bare method");
    compare(results, "c3 call, replay, attempt 2", "a bare method");
    compare(results, "b call, new key", "e Idem.atomic, new key");
    bench.ds.close();
  }

  private void prepare() throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS bench_method_order");
      st.execute("CREATE TABLE bench_method_order (id VARCHAR(100) PRIMARY KEY, amount BIGINT NOT NULL,"
          + " created_at BIGINT NOT NULL)");
      st.execute("DELETE FROM idem_record WHERE scope = '" + SCOPE + "'");
    }
    for (int i = 0; i < 2000; i++) {
      String key = "answered-" + i;
      call(OPERATION, key, i, 0);
      call(NO_LOOKUP, key, i, 0);
      answered.add(key);
    }
  }

  /** The method: one insert in its own transaction, returning what it wrote. */
  private static Receipt place(Connection c, String id, long amount) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO bench_method_order (id, amount, created_at) VALUES (?, ?, ?)")) {
      ps.setString(1, id);
      ps.setLong(2, amount);
      ps.setLong(3, System.currentTimeMillis());
      ps.executeUpdate();
    }
    return new Receipt(id, amount);
  }

  private static byte[] arguments(String key, long amount) {
    return ("{\"id\":\"" + key + "\",\"amount\":" + amount + "}").getBytes(StandardCharsets.UTF_8);
  }

  private void bare() throws SQLException {
    String id = "ord_" + UuidV7.next();
    long amount = ThreadLocalRandom.current().nextLong(1, 1_000_000);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        place(c, id, amount);
        c.commit();
      } catch (SQLException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  /**
   * A call of {@code operation} with {@code key}, as the caller's attempt {@code attempt} (0: no attempt number). The
   * order's id carries the operation, so that both operations may answer one key with their own row.
   */
  private IdempotentCall.Result<Receipt> call(String operation, String key, long amount, int attempt) {
    return call(operation, key, amount, attempt, tx -> place(tx.unwrap(Connection.class), operation + "/" + key,
        amount));
  }

  private IdempotentCall.Result<Receipt> call(String operation, String key, long amount, int attempt,
      IdempotentCall.InTransaction<Receipt> work) {
    IdempotentCall call = idem.call(RecordKey.of(SCOPE, operation, key)).fingerprintJson(arguments(key, amount));
    return (attempt > 0 ? call.attempt(attempt) : call).atomic(RECEIPTS, work);
  }

  /** A call with a new key: the method runs and its value is kept. */
  private void firstCall(String operation, int attempt) {
    IdempotentCall.Result<Receipt> r = call(operation, UuidV7.next().toString(),
        ThreadLocalRandom.current().nextLong(1, 1_000_000), attempt);
    if (r.replayed()) {
      throw new IllegalStateException("a new key replayed: " + r.execution());
    }
  }

  /**
   * A call with an answered key, replayed. With the look-up (and on a second attempt) the method does not run;
   * without it, the method runs, its insert collides with the first call's order row, rolls back, and the record is
   * read and replayed.
   */
  private void replay(String operation, int attempt) {
    int i = ThreadLocalRandom.current().nextInt(answered.size());
    String key = answered.get(i);
    IdempotentCall.Result<Receipt> r = operation.equals(NO_LOOKUP) ? call(operation, key, i, attempt)
        : call(operation, key, i, attempt, tx -> {
          throw new IllegalStateException("a replay that looks the record up first must not run the method");
        });
    if (!r.replayed() || r.value().amount() != i) {
      throw new IllegalStateException("expected the replay of " + key + ", got " + r.execution());
    }
  }

  /** The engine without the typed API: the caller encodes the answer as a StoredResponse itself. */
  private void engine() {
    String key = UuidV7.next().toString();
    long amount = ThreadLocalRandom.current().nextLong(1, 1_000_000);
    IdempotentRequest request = IdempotentRequest.of(RecordKey.of(SCOPE, OPERATION, key), arguments(key, amount),
        "application/json");
    Execution e = idem.atomic(request, tx -> StoredResponse.of(200,
        Map.of("content-type", List.of(RECEIPTS.contentType())),
        RECEIPTS.encode(place(tx.unwrap(Connection.class), OPERATION + "/" + key, amount))));
    if (e.outcome() != Execution.Outcome.STORED) {
      throw new IllegalStateException("expected STORED, got " + e);
    }
  }

  @FunctionalInterface
  private interface Op extends LoadPass.Op {}

  /**
   * Runs {@code op} on every thread for the set time; returns {ops/s, CPU us per op of this JVM and the pool's own
   * PostgreSQL backends}.
   */
  private double[] measure(String name, Op op) throws Exception {
    LoadPass.Result r = LoadPass.run(name, threads, seconds, counters, op);
    return new double[] {r.opsPerSecond(), r.clientCpuUs() + r.backendCpuUs()};
  }

  private static void compare(Map<String, List<double[]>> results, String num, String den) {
    List<double[]> n = results.get(num);
    List<double[]> d = results.get(den);
    double[] ratios = new double[n.size()];
    StringBuilder per = new StringBuilder();
    double cpuNum = 0;
    double cpuDen = 0;
    for (int i = 0; i < ratios.length; i++) {
      ratios[i] = n.get(i)[0] / d.get(i)[0];
      cpuNum += n.get(i)[1] / ratios.length;
      cpuDen += d.get(i)[1] / ratios.length;
      per.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", ratios[i]));
    }
    double median = LoadPass.median(ratios);
    System.out.printf(Locale.ROOT, "| (%s) / (%s) | %s | %.2f | %.1f / %.1f |%n", num, den, per, median, cpuNum,
        cpuDen);
  }
}
