package dev.idem.bench.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.jdbc.JdbcIdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Purge of many expired records while claims run at full rate, on PostgreSQL: the partitioned store (purge drops
 * partitions) against the unpartitioned one (purge deletes rows in batches), alternating in one run. Each pass fills
 * the table of one mode with {@code --rows} expired records (INSERT ... SELECT generate_series, spread over four past
 * days), measures claims alone for {@code --seconds}, then claims while one thread purges, until the purge is done or
 * {@code --window} seconds have passed (then the purge rate and the extrapolated total are reported, labelled).
 * Runs in a database of its own, created and dropped by the run.
 *
 * <pre>java -cp idem-bench/target/benchmarks.jar dev.idem.bench.db.PartitionPurgeBench --rows 10000000 --threads 8
 *     --seconds 10 --window 120 --passes 2 --width P7D [--admin-url jdbc:postgresql://127.0.0.1:5432/postgres]
 *     [--user postgres] [--database idem_bench_partition] [--from 1]</pre>
 * (idem-bench/scripts/partition-purge.sh runs it with these settings.)
 */
public final class PartitionPurgeBench {
  private static final long DAY = Duration.ofDays(1).toMillis();
  private static final byte[] BODY = "{\"amount\":1250,\"currency\":\"EUR\"}".getBytes(StandardCharsets.UTF_8);

  private final HikariDataSource ds;
  private final int threads;
  private final int seconds;
  private final int window;
  private final long rows;
  private final Duration width;

  private PartitionPurgeBench(String url, String user, int threads, int seconds, int window, long rows,
      Duration width) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setMaximumPoolSize(threads + 4);
    config.setPoolName("partition-bench");
    this.ds = new HikariDataSource(config);
    this.threads = threads;
    this.seconds = seconds;
    this.window = window;
    this.rows = rows;
    this.width = width;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> opts = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    String adminUrl = opts.getOrDefault("admin-url", "jdbc:postgresql://127.0.0.1:5432/postgres");
    String user = opts.getOrDefault("user", "postgres");
    String database = opts.getOrDefault("database", "idem_bench_partition");
    if (!database.matches("idem_bench_[a-z0-9_]+")) {
      throw new IllegalArgumentException("the database must be named idem_bench_..., got " + database);
    }
    String url = adminUrl.substring(0, adminUrl.lastIndexOf('/') + 1) + database;
    admin(adminUrl, user, "DROP DATABASE IF EXISTS " + database);
    admin(adminUrl, user, "CREATE DATABASE " + database);
    PartitionPurgeBench bench = new PartitionPurgeBench(url, user,
        Integer.parseInt(opts.getOrDefault("threads", "8")), Integer.parseInt(opts.getOrDefault("seconds", "10")),
        Integer.parseInt(opts.getOrDefault("window", "60")), Long.parseLong(opts.getOrDefault("rows", "10000000")),
        Duration.parse(opts.getOrDefault("width", "P1D")));
    try {
      bench.run(Integer.parseInt(opts.getOrDefault("from", "1")), Integer.parseInt(opts.getOrDefault("passes", "2")));
    } finally {
      bench.ds.close();
      admin(adminUrl, user, "DROP DATABASE IF EXISTS " + database);
    }
  }

  private static void admin(String url, String user, String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, user, ""); Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  /** Passes {@code from} to {@code passes}: odd ones measure the partitioned store first, even ones the other. */
  private void run(int from, int passes) throws Exception {
    JdbcIdempotencyStore rowStore = JdbcIdempotencyStore.builder(ds).name("rows").table("rec_rows")
        .createSchemaIfMissing(true).build();
    JdbcIdempotencyStore partStore = JdbcIdempotencyStore.builder(ds).name("partitions").table("rec_part")
        .partitionedExpiry(width).createSchemaIfMissing(true).build();
    System.out.printf(Locale.ROOT, "rows %,d, claim threads %d, claims alone %d s, purge window %d s, partitions %s"
        + " wide, %d partitions%n", rows, threads, seconds, window, width, count("pg_inherits",
        "inhparent = 'rec_part'::regclass"));
    claims(rowStore, 5, null);
    claims(partStore, 5, null);
    List<Result> results = new ArrayList<>();
    for (int pass = from; pass <= passes; pass++) {
      for (JdbcIdempotencyStore store : pass % 2 == 1 ? List.of(partStore, rowStore) : List.of(rowStore, partStore)) {
        results.add(retried(pass, store));
      }
    }
    System.out.println();
    System.out.println("| pass | mode | fill s | claims/s alone | p99 ms alone | claims/s in purge | p99 ms in purge"
        + " | max ms in purge | purge s | rows purged | rows/s | purge total s |");
    System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (Result r : results) {
      System.out.println(r.row());
    }
  }

  /**
   * A pass, again from the start (at most three times) when the database went away under it: on a shared machine other
   * work may restart the server.
   */
  private Result retried(int pass, JdbcIdempotencyStore store) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        return pass(pass, store);
      } catch (RuntimeException | SQLException e) {
        if (attempt == 3) {
          throw e;
        }
        System.out.println("pass " + pass + " of " + store.table() + " interrupted (" + e.getMessage().lines()
            .findFirst().orElse("") + "); again from the start");
        long until = System.nanoTime() + 300_000_000_000L;
        while (true) {
          try {
            execute("TRUNCATE " + store.table());
            break;
          } catch (SQLException down) {
            if (System.nanoTime() > until) {
              throw down;
            }
            Thread.sleep(2_000);
          }
        }
      }
    }
  }

  private Result pass(int pass, JdbcIdempotencyStore store) throws Exception {
    boolean partitioned = store.table().equals("rec_part");
    long now = System.currentTimeMillis();
    long fillStart = System.nanoTime();
    fill(store, partitioned, now);
    double fillSeconds = (System.nanoTime() - fillStart) / 1e9;
    claims(store, 3, null);
    Sample alone = claims(store, seconds, null);
    PurgeRun purge = new PurgeRun(store);
    Sample during = claims(store, window, purge);
    long left = count(store.table(), "scope = 'expired'");
    double total = purge.done ? purge.seconds : rows / (purge.purged / purge.seconds);
    Result r = new Result(pass, partitioned ? "partitioned (drop)" : "row by row (delete)", fillSeconds, alone, during,
        purge.seconds, partitioned ? rows - left : purge.purged, purge.done, total);
    System.out.println(r.row() + (left > 0 ? " (" + left + " expired rows left, truncated)" : ""));
    execute("TRUNCATE " + store.table());
    execute("VACUUM ANALYZE " + store.table());
    return r;
  }

  /** Expired records that are gone (no retention left), spread over four past days, each in a partition of its own. */
  private void fill(JdbcIdempotencyStore store, boolean partitioned, long now) throws Exception {
    // every filled partition ends before the current one begins, so that it is due for the drop
    long base = Math.floorDiv(now, width.toMillis()) * width.toMillis() - width.toMillis() - 5 * DAY;
    if (partitioned) {
      for (int d = 0; d < 4; d++) {
        IdempotencyRecord marker = IdempotencyRecord.finished(RecordKey.of("expired", "POST /marker", "m" + d),
            Fingerprint.ofHash("a".repeat(64)), StoredResponse.of(201, "{}"), RecordState.COMPLETED,
            Instant.ofEpochMilli(base + d * DAY), Duration.ofMinutes(1));
        store.inTransaction(tx -> store.insert(tx, marker));
      }
    }
    String expires = base + " + (g % 4) * " + DAY + " + (g % 80000000)";
    execute("INSERT INTO " + store.table() + " (scope, operation, idem_key, state, fingerprint, field_hashes,"
        + " response_status, response_headers, response_body, version, created_at, updated_at, expires_at,"
        + " retain_until, purge_at" + (partitioned ? ", gone_at" : "") + ") SELECT 'expired', 'POST /payments',"
        + " md5(g::text), 'completed', repeat('a', 64), '{\"amount\":\"" + "b".repeat(64) + "\"}', 201,"
        + " '{\"Content-Type\":[\"application/json\"]}', convert_to('{\"id\":\"pay_' || g || '\",\"status\":"
        + "\"captured\"}', 'UTF8'), 2, e - 3600000, e - 3600000, e, e, e" + (partitioned ? ", e" : "")
        + " FROM (SELECT g, " + expires + " AS e FROM generate_series(1, " + rows + ") g) s");
    execute("ANALYZE " + store.table());
  }

  /** Claims of new keys through atomic mode for {@code secs} seconds, or until the purge is done and a second more. */
  private Sample claims(JdbcIdempotencyStore store, int secs, PurgeRun purge) throws Exception {
    Idem idem = Idem.builder().name("bench-" + store.table()).store(store).build();
    Recorder recorder = new Recorder(3);
    LongAdder count = new LongAdder();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w = new Thread(() -> {
        while (!stop.get()) {
          long start = System.nanoTime();
          IdempotentRequest request = IdempotentRequest.of(RecordKey.of("claims", "POST /payments",
              UUID.randomUUID().toString()), BODY, "application/json");
          try {
            idem.atomic(request, tx -> StoredResponse.json(201, "{\"id\":\"pay_1\"}"));
          } catch (RuntimeException e) {
            failure.compareAndSet(null, e);
            stop.set(true);
          }
          recorder.recordValue(System.nanoTime() - start);
          count.increment();
        }
      });
      w.start();
      workers.add(w);
    }
    long start = System.nanoTime();
    if (purge != null) {
      purge.start();
    }
    long deadline = start + secs * 1_000_000_000L;
    while (System.nanoTime() < deadline && (purge == null || !purge.finishedSecondAgo())) {
      Thread.sleep(20);
    }
    if (purge != null) {
      purge.stop();
    }
    stop.set(true);
    for (Thread w : workers) {
      w.join();
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    if (purge != null && purge.failure != null) {
      throw purge.failure;
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    return new Sample(count.sum() / elapsed, recorder.getIntervalHistogram());
  }

  private long count(String table, String where) throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table + " WHERE " + where)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private void execute(String sql) throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  /** One thread that purges in batches of 1,000 until a batch falls short (and, partitioned, the drop is done). */
  private static final class PurgeRun {
    private final JdbcIdempotencyStore store;
    private final AtomicBoolean stop = new AtomicBoolean();
    private Thread thread;
    private volatile long purged;
    private volatile boolean done;
    private volatile double seconds;
    private volatile long finishedAt;
    private volatile RuntimeException failure;

    PurgeRun(JdbcIdempotencyStore store) {
      this.store = store;
    }

    void start() {
      thread = new Thread(() -> {
        long start = System.nanoTime();
        int n;
        try {
          do {
            n = store.purgeExpired(Instant.now(), 1_000);
            purged += n;
            seconds = (System.nanoTime() - start) / 1e9;
          } while (n == 1_000 && !stop.get());
          done = n < 1_000;
        } catch (RuntimeException e) {
          failure = e;
        }
        finishedAt = System.nanoTime();
      });
      thread.start();
    }

    boolean finishedSecondAgo() {
      return finishedAt != 0 && System.nanoTime() - finishedAt > 1_000_000_000L;
    }

    void stop() throws InterruptedException {
      stop.set(true);
      thread.join();
    }
  }

  private record Sample(double perSecond, Histogram latency) {
    double p99() {
      return latency.getValueAtPercentile(99) / 1e6;
    }

    double max() {
      return latency.getMaxValue() / 1e6;
    }
  }

  private record Result(int pass, String mode, double fill, Sample alone, Sample during, double purgeSeconds,
      long purged, boolean done, double total) {
    String row() {
      return String.format(Locale.ROOT, "| %d | %s | %.0f | %.0f | %.1f | %.0f | %.1f | %.0f | %.1f%s | %,d | %,.0f |"
          + " %.1f%s |", pass, mode, fill, alone.perSecond(), alone.p99(), during.perSecond(), during.p99(),
          during.max(), purgeSeconds, done ? "" : " (window)", purged, purged / Math.max(purgeSeconds, 1e-3), total,
          done ? "" : " (extrapolated)");
    }
  }
}
