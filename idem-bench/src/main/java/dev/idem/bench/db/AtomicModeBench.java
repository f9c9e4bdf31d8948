package dev.idem.bench.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.core.Scope;
import dev.idem.core.StoredResponse;
import dev.idem.core.UuidV7;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.jdbc.JdbcTransaction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The database load harness for atomic mode on PostgreSQL: a bare two-insert business transaction (a), the same
 * transaction through Idem's atomic mode (b), a hand-written raw-SQL claim+complete in the same transaction (c),
 * the replay path (d: Idem, e: raw SQL), and Idem with its kept answers sealed at rest (f: new key, g: replay),
 * a new key sent as the caller's first attempt, which skips the look-up (b3), a stored key sent again as a first
 * attempt, which runs the work, collides and replays (d3), measured side by side in one run, alternating, on
 * pre-filled tables.
 *
 * <pre>java -cp idem-bench/target/benchmarks.jar dev.idem.bench.db.AtomicModeBench --threads 8 --seconds 8 --passes 5
 *     [--only a,b,c,b2,b3,c2,d,d3,e,f,g] [--url jdbc:postgresql://127.0.0.1:5432/test --user postgres]
 *     [--prefill 100000] [--wal-breakdown true]</pre>
 *
 * <p>{@code --wal-breakdown true} prints, for every variant's last pass, where its WAL went per relation and record
 * type ({@link WalBreakdown}, through {@code pg_walinspect}).
 */
public final class AtomicModeBench {
  private final HikariDataSource ds;
  private final PgCounters counters;
  private final Idem idem;
  private final Idem optimistic;
  private final Idem sealed;
  private final int threads;
  private final int seconds;
  private final List<String> replayKeys = new ArrayList<>();
  private final List<byte[]> replayBodies = new ArrayList<>();

  private AtomicModeBench(String url, String user, int threads, int seconds) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setMaximumPoolSize(threads);
    config.setMinimumIdle(threads);
    config.setPoolName("bench");
    this.ds = new HikariDataSource(config);
    this.counters = new PgCounters(ds, threads);
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(ds).name("bench").createSchemaIfMissing(true).build();
    this.idem = Idem.builder().name("bench").store(store).build();
    this.optimistic = Idem.builder().name("bench-optimistic").store(store)
        .defaultPolicy(OperationPolicy.builder().lookupFirst(false).build()).build();
    this.sealed = Idem.builder().name("bench-sealed").store(store)
        .encryption(Encryption.with(Keyring.generate("bench"))).build();
    this.threads = threads;
    this.seconds = seconds;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    String url = opts.getOrDefault("url", "jdbc:postgresql://127.0.0.1:5432/test");
    String user = opts.getOrDefault("user", "postgres");
    int threads = Integer.parseInt(opts.getOrDefault("threads", "8"));
    int seconds = Integer.parseInt(opts.getOrDefault("seconds", "8"));
    int passes = Integer.parseInt(opts.getOrDefault("passes", "5"));
    int prefill = Integer.parseInt(opts.getOrDefault("prefill", "100000"));
    AtomicModeBench bench = new AtomicModeBench(url, user, threads, seconds);
    bench.prepare(prefill);
    System.out.printf(Locale.ROOT, "# atomic mode on %s, %d threads, %d s per measurement, %d passes%n",
        url, threads, seconds, passes);
    Map<String, Op> variants = new LinkedHashMap<>();
    variants.put("a bare", bench::bare);
    variants.put("b idem", bench::idem);
    variants.put("c raw", () -> bench.raw(true));
    variants.put("b2 idem no-lookup", bench::idemOptimistic);
    variants.put("b3 idem first attempt", bench::idemFirstAttempt);
    variants.put("c2 raw no-lookup", () -> bench.raw(false));
    variants.put("d idem replay", bench::idemReplay);
    variants.put("d3 idem duplicate first attempt", bench::idemDuplicateFirstAttempt);
    variants.put("e raw replay", bench::rawReplay);
    variants.put("f idem sealed", bench::idemSealed);
    variants.put("g idem sealed replay", bench::idemSealedReplay);
    String only = opts.get("only");
    if (only != null) {
      List<String> keep = List.of(only.split(","));
      variants.keySet().removeIf(name -> keep.stream().noneMatch(k -> name.startsWith(k + " ")));
    }
    for (Map.Entry<String, Op> v : variants.entrySet()) {
      bench.run(v.getKey() + " (priming, discarded)", v.getValue());
    }
    Map<String, List<LoadPass.Result>> results = new LinkedHashMap<>();
    for (int pass = 1; pass <= passes; pass++) {
      for (Map.Entry<String, Op> v : variants.entrySet()) {
        results.computeIfAbsent(v.getKey(), k -> new ArrayList<>())
            .add(bench.run(v.getKey() + ", pass " + pass, v.getValue()));
      }
    }
    bench.report(results, passes);
    if (Boolean.parseBoolean(opts.getOrDefault("wal-breakdown", "false")) && WalBreakdown.enable(bench.ds)) {
      for (Map.Entry<String, List<LoadPass.Result>> v : results.entrySet()) {
        LoadPass.Result last = v.getValue().get(v.getValue().size() - 1);
        try {
          WalBreakdown.print(last.name(), WalBreakdown.between(bench.ds, last.walFrom(), last.walTo()), last.ops());
        } catch (SQLException e) {
          // a checkpoint since the pass may have recycled its WAL
          System.out.println("# no WAL breakdown for " + last.name() + ": " + e.getMessage().trim());
        }
      }
    }
    bench.ds.close();
  }

  // ------------------------------------------------------------------ set-up

  private void prepare(int prefill) throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS bench_ledger");
      st.execute("DROP TABLE IF EXISTS bench_payment");
      st.execute("CREATE TABLE bench_payment (id VARCHAR(40) PRIMARY KEY, account_id VARCHAR(40) NOT NULL,"
          + " amount BIGINT NOT NULL, currency CHAR(3) NOT NULL, status VARCHAR(16) NOT NULL,"
          + " created_at BIGINT NOT NULL)");
      st.execute("CREATE TABLE bench_ledger (id BIGSERIAL PRIMARY KEY, payment_id VARCHAR(40) NOT NULL,"
          + " account_id VARCHAR(40) NOT NULL, amount BIGINT NOT NULL, created_at BIGINT NOT NULL)");
      st.execute("DELETE FROM idem_record WHERE scope = 'bench'");
      System.out.printf("# pre-filling %d payments and %d completed records...%n", prefill, prefill);
      st.execute("INSERT INTO bench_payment SELECT 'pay_' || g, 'acct_' || (g % 1000), g, 'EUR', 'captured', 0"
          + " FROM generate_series(1, " + prefill + ") g");
      st.execute("INSERT INTO bench_ledger (payment_id, account_id, amount, created_at) SELECT 'pay_' || g,"
          + " 'acct_' || (g % 1000), g, 0 FROM generate_series(1, " + prefill + ") g");
      st.execute("INSERT INTO idem_record (scope, operation, idem_key, state, fingerprint, response_status,"
          + " response_headers, response_body, version, created_at, updated_at, expires_at)"
          + " SELECT 'bench', 'POST /payments', 'prefill-' || g, 'completed', repeat('0', 64), 201,"
          + " '{\"content-type\":[\"application/json\"]}', convert_to('{\"id\":\"pay_' || g || '\"}', 'UTF8'),"
          + " 1, 0, 0, 9999999999999 FROM generate_series(1, " + prefill + ") g");
      st.execute("VACUUM ANALYZE bench_payment");
      st.execute("VACUUM ANALYZE bench_ledger");
      st.execute("VACUUM ANALYZE idem_record");
    }
    // replay keys: real Idem records with real fingerprints, written through the engine
    for (int i = 0; i < 2000; i++) {
      String key = "replay-" + i;
      long n = i;
      idem.atomic(request(key, body(n)), tx -> businessWrite(JdbcTransaction.connectionOf(tx), "pay_r" + n, n));
      replayKeys.add(key);
      replayBodies.add(body(n).getBytes(StandardCharsets.UTF_8));
      sealed.atomic(request("sealed-" + key, body(n)),
          tx -> businessWrite(JdbcTransaction.connectionOf(tx), "pay_rs" + n, n));
    }
  }

  // ------------------------------------------------------------------ the variants

  private static String body(long n) {
    return "{\"account_id\":\"acct_" + n % 1000 + "\",\"amount\":" + (100 + n % 5000)
        + ",\"currency\":\"EUR\",\"description\":\"order " + n + "\"}";
  }

  private static IdempotentRequest request(String key, String body) {
    return IdempotentRequest.of(Scope.of("bench"), Operation.of("POST /payments"), IdempotencyKey.of(key),
        body.getBytes(StandardCharsets.UTF_8));
  }

  private static StoredResponse businessWrite(Connection c, String paymentId, long n) throws SQLException {
    long now = System.currentTimeMillis();
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO bench_payment (id, account_id, amount, currency,"
        + " status, created_at) VALUES (?, ?, ?, 'EUR', 'captured', ?)")) {
      ps.setString(1, paymentId);
      ps.setString(2, "acct_" + n % 1000);
      ps.setLong(3, 100 + n % 5000);
      ps.setLong(4, now);
      ps.executeUpdate();
    }
    try (PreparedStatement ps = c.prepareStatement(
        "INSERT INTO bench_ledger (payment_id, account_id, amount, created_at) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, paymentId);
      ps.setString(2, "acct_" + n % 1000);
      ps.setLong(3, 100 + n % 5000);
      ps.setLong(4, now);
      ps.executeUpdate();
    }
    return StoredResponse.json(201, "{\"id\":\"" + paymentId + "\",\"account_id\":\"acct_" + n % 1000
        + "\",\"amount\":" + (100 + n % 5000) + ",\"currency\":\"EUR\",\"status\":\"captured\",\"created_at\":"
        + now + "}");
  }

  private void bare() throws Exception {
    String id = "pay_" + UuidV7.next();
    long n = ThreadLocalRandom.current().nextLong(1_000_000);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try {
        businessWrite(c, id, n);
        c.commit();
      } catch (SQLException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  private void idem() {
    atomicThrough(idem, false);
  }

  private void idemOptimistic() {
    atomicThrough(optimistic, false);
  }

  /** A new key sent as the caller's first attempt ({@code Idempotency-Attempt: 1}): no look-up before the work. */
  private void idemFirstAttempt() {
    atomicThrough(idem, true);
  }

  private void atomicThrough(Idem engine, boolean firstAttempt) {
    String key = UuidV7.next().toString();
    long n = ThreadLocalRandom.current().nextLong(1_000_000);
    Execution e = engine.atomic(request(key, body(n)).firstAttempt(firstAttempt),
        tx -> businessWrite(JdbcTransaction.connectionOf(tx), "pay_" + key, n));
    if (e.outcome() != Execution.Outcome.STORED) {
      throw new IllegalStateException("expected STORED, got " + e);
    }
  }

  /**
   * The same SQL as Idem's atomic mode, written by hand: an auto-commit primary-key look-up (when {@code lookup}),
   * the business writes, then one insert of the finished record sent together with the COMMIT.
   */
  private void raw(boolean lookup) throws Exception {
    String key = UuidV7.next().toString();
    long n = ThreadLocalRandom.current().nextLong(1_000_000);
    byte[] bodyBytes = body(n).getBytes(StandardCharsets.UTF_8);
    String hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bodyBytes));
    try (Connection c = ds.getConnection()) {
      if (lookup) {
        try (PreparedStatement ps = c.prepareStatement("SELECT state, fingerprint, response_status,"
            + " response_headers, response_body FROM idem_record WHERE scope = ? AND operation = ? AND idem_key = ?")) {
          ps.setString(1, "bench");
          ps.setString(2, "POST /payments");
          ps.setString(3, key);
          try (ResultSet rs = ps.executeQuery()) {
            if (rs.next()) {
              throw new IllegalStateException("fresh key exists: " + key);
            }
          }
        }
      }
      c.setAutoCommit(false);
      try {
        StoredResponse response = businessWrite(c, "pay_" + key, n);
        long now = System.currentTimeMillis();
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO idem_record (scope, operation, idem_key, state,"
            + " fingerprint, response_status, response_headers, response_body, version, created_at, updated_at,"
            + " expires_at) VALUES (?, ?, ?, 'completed', ?, ?, ?, ?, 1, ?, ?, ?); COMMIT")) {
          ps.setString(1, "bench");
          ps.setString(2, "POST /payments");
          ps.setString(3, key);
          ps.setString(4, hash);
          ps.setInt(5, response.status());
          ps.setString(6, "{\"content-type\":[\"application/json\"]}");
          ps.setBytes(7, response.body());
          ps.setLong(8, now);
          ps.setLong(9, now);
          ps.setLong(10, now + 86_400_000L);
          ps.executeUpdate();
        }
      } catch (SQLException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  private void idemSealed() {
    atomicThrough(sealed, false);
  }

  private void idemReplay() {
    replayThrough(idem, "");
  }

  private void idemSealedReplay() {
    replayThrough(sealed, "sealed-");
  }

  /**
   * The price of a wrong guess: a stored key sent again as a first attempt runs the work without a look-up, collides
   * at the record's insert, rolls the work back and replays.
   */
  private void idemDuplicateFirstAttempt() {
    int i = ThreadLocalRandom.current().nextInt(replayKeys.size());
    long n = ThreadLocalRandom.current().nextLong(1_000_000);
    IdempotentRequest request = IdempotentRequest.of(Scope.of("bench"), Operation.of("POST /payments"),
        IdempotencyKey.of(replayKeys.get(i)), replayBodies.get(i)).firstAttempt(true);
    Execution e = idem.atomic(request,
        tx -> businessWrite(JdbcTransaction.connectionOf(tx), "pay_" + UuidV7.next(), n));
    if (e.outcome() != Execution.Outcome.REPLAYED) {
      throw new IllegalStateException("expected REPLAYED, got " + e);
    }
  }

  private void replayThrough(Idem engine, String prefix) {
    int i = ThreadLocalRandom.current().nextInt(replayKeys.size());
    IdempotentRequest request = IdempotentRequest.of(Scope.of("bench"), Operation.of("POST /payments"),
        IdempotencyKey.of(prefix + replayKeys.get(i)), replayBodies.get(i));
    Execution e = engine.atomic(request, tx -> {
      throw new IllegalStateException("a replay must not run the work");
    });
    if (e.outcome() != Execution.Outcome.REPLAYED) {
      throw new IllegalStateException("expected REPLAYED, got " + e);
    }
  }

  private void rawReplay() throws Exception {
    int i = ThreadLocalRandom.current().nextInt(replayKeys.size());
    try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT state, fingerprint,"
        + " response_status, response_headers, response_body FROM idem_record"
        + " WHERE scope = ? AND operation = ? AND idem_key = ?")) {
      ps.setString(1, "bench");
      ps.setString(2, "POST /payments");
      ps.setString(3, replayKeys.get(i));
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new IllegalStateException("missing replay key");
        }
        rs.getBytes(5);
      }
    }
  }

  // ------------------------------------------------------------------ measurement

  @FunctionalInterface
  private interface Op extends LoadPass.Op {}

  private LoadPass.Result run(String name, Op op) throws Exception {
    return LoadPass.run(name, threads, seconds, counters, op);
  }

  private void report(Map<String, List<LoadPass.Result>> results, int passes) {
    System.out.println();
    System.out.println("| variant | ops/s per pass | mean ops/s | client CPU us/op | backends CPU us/op"
        + " | commits/op | WAL B/op |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- |");
    Map<String, Double> means = new LinkedHashMap<>();
    results.forEach((name, list) -> {
      double mean = list.stream().mapToDouble(LoadPass.Result::opsPerSecond).average().orElse(0);
      means.put(name, mean);
      StringBuilder per = new StringBuilder();
      for (LoadPass.Result r : list) {
        per.append(per.length() == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.0f", r.opsPerSecond()));
      }
      System.out.printf(Locale.ROOT, "| %s | %s | %.0f | %.1f | %.1f | %.2f | %.0f |%n", name, per, mean,
          list.stream().mapToDouble(LoadPass.Result::clientCpuUs).average().orElse(0),
          list.stream().mapToDouble(LoadPass.Result::backendCpuUs).average().orElse(0),
          LoadPass.median(list.stream().mapToDouble(LoadPass.Result::commitsPerOp).toArray()),
          LoadPass.median(list.stream().mapToDouble(LoadPass.Result::walBytesPerOp).toArray()));
    });
    System.out.println();
    System.out.println("| ratio | per pass | median (min-max) | inverse ratio of CPU us/op (client+backends) |");
    System.out.println("| --- | --- | --- | --- |");
    String[][] pairs = {{"b idem", "a bare"}, {"b idem", "c raw"}, {"b2 idem no-lookup", "a bare"},
        {"b2 idem no-lookup", "c2 raw no-lookup"}, {"b3 idem first attempt", "a bare"},
        {"b3 idem first attempt", "c2 raw no-lookup"}, {"d3 idem duplicate first attempt", "a bare"},
        {"d idem replay", "a bare"}, {"d idem replay", "e raw replay"},
        {"f idem sealed", "a bare"}, {"f idem sealed", "b idem"}, {"g idem sealed replay", "a bare"},
        {"g idem sealed replay", "d idem replay"}};
    for (String[] pair : pairs) {
      if (results.containsKey(pair[0]) && results.containsKey(pair[1])) {
        ratio(results, pair[0], pair[1], passes);
      }
    }
  }

  /** Throughput ratio per pass (same pass, adjacent runs), its median, and the ratio of CPU per operation. */
  private static void ratio(Map<String, List<LoadPass.Result>> results, String num, String den, int passes) {
    StringBuilder per = new StringBuilder();
    double[] ratios = new double[passes];
    double cpuNum = 0;
    double cpuDen = 0;
    for (int i = 0; i < passes; i++) {
      LoadPass.Result n = results.get(num).get(i);
      LoadPass.Result d = results.get(den).get(i);
      ratios[i] = n.opsPerSecond() / d.opsPerSecond();
      cpuNum += n.clientCpuUs() + n.backendCpuUs();
      cpuDen += d.clientCpuUs() + d.backendCpuUs();
      per.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.2f", ratios[i]));
    }
    double median = LoadPass.median(ratios);
    Arrays.sort(ratios);
    System.out.printf(Locale.ROOT, "| (%s) / (%s) | %s | %.2f (%.2f-%.2f) | %.2f |%n", num, den, per, median,
        ratios[0], ratios[passes - 1], cpuDen / cpuNum);
  }

  /** CPU time from /proc, in clock ticks (USER_HZ, 100 on Linux). */
  static final class Cpu {
    private Cpu() {}

    static long processTicks(long pid) {
      try {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]);
      } catch (Exception e) {
        return 0;
      }
    }

    /** Total CPU ticks of every process whose command name is {@code name}. */
    static long ticksOf(String name) {
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
