package dev.idem.bench.outbox;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.bench.outbox.BenchSupport.Cpu;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxTransport;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * Outbox relay throughput on PostgreSQL: how fast an {@link OutboxRelay} drains a backlog of pending events to a
 * transport that accepts everything at once, against the simplest hand-written drain on the same table and data,
 * measured side by side in one run.
 *
 * <p>Each measurement starts from a fresh fill: the table is truncated, {@code --events} rows are copied into it from
 * a template table (filled once through {@link Outbox#enqueueAll} in committed chunks), then {@code VACUUM ANALYZE}.
 * The clock runs from the first claim to the moment the last event is recorded delivered (committed). Variants of one
 * (mode, batch size) cell run next to each other, in an order that alternates between repeats, and every ratio is
 * taken between runs of the same repeat.
 *
 * <ul>
 *   <li>{@code baseline}: one thread, one transaction per batch: {@code SELECT ... WHERE status = 'pending' ORDER BY
 *       available_at, seq LIMIT b FOR UPDATE SKIP LOCKED} (the same partial index as the relay's claim; ordering by
 *       seq alone lets the planner walk the primary key past every delivered row), hand the rows to the same
 *       transport, {@code UPDATE ... SET status = 'delivered'} (or {@code DELETE}) {@code WHERE seq = ANY(?)}, commit.
 *   <li>{@code relay xN}: an {@link OutboxRelay} with N threads and batch size b (pool: N + 2 connections).
 *   <li>{@code relay xN sc-off} (with {@code --async-commit true}): the same relay on a pool whose connections run
 *       {@code SET synchronous_commit = off}, a deployment choice that needs no change to the relay.
 *   <li>{@code relay SQL x1} and {@code HOT claim x1} (with {@code --experiments true}): the relay's two-transaction
 *       protocol written by hand on one thread, as it is and with a claim that can be a HOT update; experiments that
 *       size possible changes to the relay, not competitors.
 * </ul>
 *
 * <pre>
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.outbox.RelayThroughputBench --events 200000
 *     [--threads 1,4] [--batches 10,100,500] [--modes mark,delete] [--repeats 3] [--payload 256]
 *     [--events-by-batch 10:20000] [--baseline true] [--async-commit false] [--experiments false]
 *     [--profile false] [--matrix true] [--timeout 180]
 *     [--explain-rows 1000000 [--explain-pending N] [--explain-mariadb true]]
 *     [--url jdbc:postgresql://127.0.0.1:5432/test --user postgres]
 * </pre>
 *
 * {@code --profile true} adds one run per cell through a timing JDBC wrapper and prints where the relay's time goes.
 */
public final class RelayThroughputBench {
  private final Map<String, String> flags;
  private final String url;
  private final String user;
  private final int events;
  private final int payload;
  private final long timeoutSeconds;
  private final HikariDataSource admin;
  private final Map<String, HikariDataSource> pools = new LinkedHashMap<>();
  private final String table;
  private final String template;

  private RelayThroughputBench(Map<String, String> flags) {
    this.flags = flags;
    this.url = BenchSupport.postgresUrl(flags);
    this.user = BenchSupport.postgresUser(flags);
    this.events = Integer.parseInt(flags.getOrDefault("events", "200000"));
    this.payload = Integer.parseInt(flags.getOrDefault("payload", "256"));
    this.timeoutSeconds = Long.parseLong(flags.getOrDefault("timeout", "180"));
    this.admin = BenchSupport.pool(url, user, 2, "outbox-bench-admin", Map.of("reWriteBatchedInserts", "true"));
    this.table = BenchSupport.uniqueTable("bench_outbox");
    this.template = table + "_tpl";
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> flags = BenchSupport.flags(args);
    RelayThroughputBench bench = new RelayThroughputBench(flags);
    Thread cleanup = new Thread(bench::dropAll, "outbox-bench-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    try {
      bench.header();
      if (Boolean.parseBoolean(flags.getOrDefault("matrix", "true"))) {
        bench.matrix();
      }
      int explainRows = Integer.parseInt(flags.getOrDefault("explain-rows", "0"));
      if (explainRows > 0) {
        int pending = Integer.parseInt(flags.getOrDefault("explain-pending", String.valueOf(explainRows)));
        bench.explainPostgres(explainRows, pending);
        if (Boolean.parseBoolean(flags.getOrDefault("explain-mariadb", "false"))) {
          bench.explainMariaDb(explainRows, pending);
        }
      }
    } finally {
      bench.dropAll();
      bench.pools.values().forEach(HikariDataSource::close);
      bench.admin.close();
      Runtime.getRuntime().removeShutdownHook(cleanup);
    }
  }

  private synchronized void dropAll() {
    if (admin.isClosed()) {
      return;
    }
    BenchSupport.dropTables(admin, table);
    BenchSupport.dropTables(admin, template);
    BenchSupport.dropTables(admin, table + "_x");
    BenchSupport.dropTables(admin, table + "_hot");
  }

  private void header() throws SQLException {
    try (Connection c = admin.getConnection()) {
      System.out.println("# Outbox relay throughput, " + Instant.now());
      System.out.println();
      System.out.println("- " + BenchSupport.scalar(c, "SELECT version()"));
      System.out.println("- JVM " + System.getProperty("java.vm.name") + " " + Runtime.version() + ", "
          + Runtime.getRuntime().availableProcessors() + " CPUs; load average " + BenchSupport.loadAverage());
      System.out.println("- " + url + " as " + user + "; table " + table + "; " + events + " events of " + payload
          + " B payload per measurement");
      System.out.println();
    }
  }

  // ------------------------------------------------------------------------------------------------------ matrix

  private record Run(String variant, String mode, int batch, int repeat, long events, double seconds,
      double clientUs, double dbUs) {
    double rate() {
      return events / seconds;
    }
  }

  private void matrix() throws Exception {
    int[] threads = BenchSupport.ints(flags.getOrDefault("threads", "1,4"));
    int[] batches = BenchSupport.ints(flags.getOrDefault("batches", "10,100,500"));
    String[] modes = flags.getOrDefault("modes", "mark,delete").split(",");
    int repeats = Integer.parseInt(flags.getOrDefault("repeats", "3"));
    boolean baseline = Boolean.parseBoolean(flags.getOrDefault("baseline", "true"));
    boolean profile = Boolean.parseBoolean(flags.getOrDefault("profile", "false"));

    BenchSupport.createTables(admin, JdbcDialect.POSTGRESQL, table);
    BenchSupport.createTables(admin, JdbcDialect.POSTGRESQL, template);
    fillTemplate();
    boolean async = Boolean.parseBoolean(flags.getOrDefault("async-commit", "false"));
    for (int t : threads) {
      pools.put("relay x" + t, BenchSupport.pool(url, user, t + 2, "outbox-bench-" + t, Map.of()));
    }
    if (async) {
      pools.put("relay x" + threads[0] + " sc-off", BenchSupport.pool(url, user, threads[0] + 2, "outbox-bench-async",
          Map.of("options", "-c synchronous_commit=off")));
    }

    // a discarded priming run: the first write-heavy run after an idle spell is slower
    int primeEvents = Math.min(events, 50_000);
    refill(primeEvents);
    Run prime = relay("relay x" + threads[0], 100, false, primeEvents, "prime", 0, null);
    printBaselinePlan();
    System.out.println(BenchSupport.fmt("priming run (discarded): relay x%d, batch 100: %.0f events/s", threads[0],
        prime.rate()));
    System.out.println();

    List<String> variants = new ArrayList<>();
    if (baseline) {
      variants.add("baseline");
    }
    variants.addAll(pools.keySet());
    if (Boolean.parseBoolean(flags.getOrDefault("experiments", "false"))) {
      // hand-written two-transaction drains, 1 thread: the relay's own SQL, and a claim that can be a HOT update
      BenchSupport.createTables(admin, JdbcDialect.POSTGRESQL, table + "_hot");
      try (Connection c = admin.getConnection(); Statement st = c.createStatement()) {
        st.execute("ALTER TABLE " + table + "_hot SET (fillfactor = 70)");
      }
      variants.add("relay SQL x1");
      variants.add("HOT claim x1");
    }
    List<Run> runs = new ArrayList<>();
    for (int r = 1; r <= repeats; r++) {
      for (String mode : modes) {
        boolean delete = mode.equals("delete");
        for (int b : batches) {
          List<String> order = new ArrayList<>(variants);
          if (r % 2 == 0) {
            Collections.reverse(order);
          }
          int n = eventsFor(b);
          for (String v : order) {
            Run run;
            if (v.equals("HOT claim x1")) {
              refill(table + "_hot", n);
              run = twoTransactions(v, table + "_hot", true, b, delete, n, mode, r);
            } else {
              refill(n);
              run = v.equals("baseline") ? baseline(b, delete, n, mode, r)
                  : v.equals("relay SQL x1") ? twoTransactions(v, table, false, b, delete, n, mode, r)
                  : relay(v, b, delete, n, mode, r, null);
            }
            runs.add(run);
            System.out.println(BenchSupport.fmt("  repeat %d %-6s batch %3d %-8s %8.0f events/s  %5.2f s"
                    + "  client %5.1f us/ev  db %5.1f us/ev  (load %s)", r, mode, b, v, run.rate(), run.seconds(),
                run.clientUs(), run.dbUs(), BenchSupport.loadAverage()));
          }
        }
      }
    }
    System.out.println();
    report(runs, variants, modes, batches);

    if (profile) {
      System.out.println();
      System.out.println("## Where the relay's time goes (timing JDBC wrapper; these runs are not in the tables)");
      for (String mode : modes) {
        for (int t : threads) {
          for (int b : batches) {
            int n = eventsFor(b);
            refill(n);
            JdbcProfile p = new JdbcProfile(table);
            Run run = relay("relay x" + t, b, mode.equals("delete"), n, mode, 0, p);
            System.out.println();
            System.out.println(BenchSupport.fmt("### relay x%d, batch %d, %s: %.0f events/s, %.2f s", t, b, mode,
                run.rate(), run.seconds()));
            System.out.println();
            long cycles = (n + b - 1) / b;
            p.report(cycles, run.seconds(), t).forEach(System.out::println);
            refill(n);
            JdbcProfile pb = new JdbcProfile(table);
            Run base = baselineOn(pb.wrap(pools.get("relay x" + threads[0])), b, mode.equals("delete"), n,
                mode, 0);
            System.out.println();
            System.out.println(BenchSupport.fmt("### baseline, batch %d, %s: %.0f events/s, %.2f s", b, mode,
                base.rate(), base.seconds()));
            System.out.println();
            pb.report(cycles, base.seconds(), 1).forEach(System.out::println);
          }
        }
      }
    }
  }

  /**
   * The events per measurement for a batch size: {@code --events}, or less where {@code --events-by-batch 10:20000}.
   */
  private int eventsFor(int batch) {
    for (String pair : flags.getOrDefault("events-by-batch", "").split(",")) {
      String[] kv = pair.split(":");
      if (kv.length == 2 && Integer.parseInt(kv[0].trim()) == batch) {
        return Math.min(events, Integer.parseInt(kv[1].trim()));
      }
    }
    return events;
  }

  private void report(List<Run> runs, List<String> variants, String[] modes, int[] batches) {
    System.out.println("## Events per second (median of " + runs.stream().mapToInt(Run::repeat).max().orElse(0)
        + " runs, min-max), CPU microseconds per event (median)");
    System.out.println();
    System.out.println("| mode | batch | events | variant | events/s median | min-max | client CPU us/ev"
        + " | db CPU us/ev |");
    System.out.println("| --- | ---: | ---: | --- | ---: | --- | ---: | ---: |");
    for (String mode : modes) {
      for (int b : batches) {
        for (String v : variants) {
          List<Run> cell = runs.stream().filter(x -> x.mode().equals(mode) && x.batch() == b
              && x.variant().equals(v)).toList();
          double[] rates = cell.stream().mapToDouble(Run::rate).toArray();
          System.out.println(BenchSupport.fmt("| %s | %d | %d | %s | %.0f | %.0f-%.0f | %.1f | %.1f |", mode, b,
              eventsFor(b), v,
              BenchSupport.median(rates), BenchSupport.min(rates), BenchSupport.max(rates),
              BenchSupport.median(cell.stream().mapToDouble(Run::clientUs).toArray()),
              BenchSupport.median(cell.stream().mapToDouble(Run::dbUs).toArray())));
        }
      }
    }
    if (!variants.contains("baseline")) {
      return;
    }
    System.out.println();
    System.out.println("## Ratio relay / baseline (per repeat, same cell; median, min-max), and the inverse ratio of"
        + " CPU per event (client + db)");
    System.out.println();
    System.out.println("| mode | batch | variant | ratio median | min-max | per repeat | CPU-based ratio |");
    System.out.println("| --- | ---: | --- | ---: | --- | --- | ---: |");
    for (String mode : modes) {
      for (int b : batches) {
        for (String v : variants) {
          if (v.equals("baseline")) {
            continue;
          }
          List<Double> ratios = new ArrayList<>();
          double cpuRelay = 0;
          double cpuBase = 0;
          for (Run x : runs) {
            if (x.mode().equals(mode) && x.batch() == b && x.variant().equals(v)) {
              Run base = runs.stream().filter(y -> y.mode().equals(mode) && y.batch() == b
                  && y.variant().equals("baseline") && y.repeat() == x.repeat()).findFirst().orElseThrow();
              ratios.add(x.rate() / base.rate());
              cpuRelay += x.clientUs() + x.dbUs();
              cpuBase += base.clientUs() + base.dbUs();
            }
          }
          double[] rs = ratios.stream().mapToDouble(Double::doubleValue).toArray();
          StringBuilder per = new StringBuilder();
          for (double d : rs) {
            per.append(per.length() == 0 ? "" : ", ").append(BenchSupport.fmt("%.2f", d));
          }
          System.out.println(BenchSupport.fmt("| %s | %d | %s | **%.2f** | %.2f-%.2f | %s | %.2f |", mode, b, v,
              BenchSupport.median(rs), BenchSupport.min(rs), BenchSupport.max(rs), per,
              cpuRelay == 0 ? Double.NaN : cpuBase / cpuRelay));
        }
      }
    }
  }

  // --------------------------------------------------------------------------------------------------- filling

  /** Fills the template once through the public API: Outbox.enqueueAll in committed chunks of 1,000. */
  private void fillTemplate() throws SQLException {
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(admin).dialect(JdbcDialect.POSTGRESQL).table(template)
        .build()).build();
    long t0 = System.nanoTime();
    try (Connection c = admin.getConnection()) {
      c.setAutoCommit(false);
      List<OutboxEvent> chunk = new ArrayList<>(1000);
      for (int i = 1; i <= events; i++) {
        chunk.add(BenchSupport.event(i, payload, null));
        if (chunk.size() == 1000 || i == events) {
          outbox.enqueueAll(JdbcTransaction.of(c), chunk);
          c.commit();
          chunk.clear();
        }
      }
      c.setAutoCommit(true);
    }
    double s = (System.nanoTime() - t0) / 1e9;
    System.out.println(BenchSupport.fmt("template filled through Outbox.enqueueAll (chunks of 1,000, committed,"
        + " reWriteBatchedInserts): %d events in %.1f s, %.0f events/s", events, s, events / s));
  }

  /** A fresh fill: truncate, copy {@code n} rows from the template, VACUUM ANALYZE. */
  private void refill(int n) throws SQLException {
    refill(table, n);
  }

  private void refill(String table, int n) throws SQLException {
    try (Connection c = admin.getConnection()) {
      c.setAutoCommit(true);
      try (Statement st = c.createStatement()) {
        st.execute("TRUNCATE " + table + "_attempt, " + table + " RESTART IDENTITY");
      }
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " SELECT * FROM " + template
          + " ORDER BY seq LIMIT ?")) {
        ps.setInt(1, n);
        int inserted = ps.executeUpdate();
        if (inserted != n) {
          throw new IllegalStateException("copied " + inserted + " rows, expected " + n);
        }
      }
      try (Statement st = c.createStatement()) {
        st.execute("VACUUM ANALYZE " + table);
      }
    }
  }

  /** The baseline's locking select, explained on the freshly filled table (it should use the due index too). */
  private void printBaselinePlan() throws SQLException {
    refill(events);
    try (Connection c = admin.getConnection(); PreparedStatement ps = c.prepareStatement("EXPLAIN SELECT seq FROM "
        + table + " WHERE status = 'pending' ORDER BY available_at, seq LIMIT ? FOR UPDATE SKIP LOCKED")) {
      ps.setInt(1, 100);
      System.out.println("baseline's select, EXPLAIN on " + events + " pending rows:");
      System.out.println();
      System.out.println("```");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          System.out.println(rs.getString(1).replace(table, "<table>"));
        }
      }
      System.out.println("```");
      System.out.println();
    }
  }

  private void verify(int n, boolean delete, String what) throws SQLException {
    verify(table, n, delete, what);
  }

  private void verify(String table, int n, boolean delete, String what) throws SQLException {
    try (Connection c = admin.getConnection()) {
      long total = Long.parseLong(BenchSupport.scalar(c, "SELECT count(*) FROM " + table));
      long delivered = Long.parseLong(BenchSupport.scalar(c, "SELECT count(*) FROM " + table
          + " WHERE status = 'delivered' AND lease_owner IS NULL"));
      boolean ok = delete ? total == 0 : total == n && delivered == n;
      if (!ok) {
        throw new IllegalStateException(what + ": expected every event " + (delete ? "deleted" : "delivered")
            + ", found " + total + " rows of which " + delivered + " delivered");
      }
    }
  }

  // ------------------------------------------------------------------------------------------------- variants

  /** A transport that accepts every message at once. */
  private static final class Sink implements OutboxTransport {
    final LongAdder sent = new LongAdder();

    @Override
    public DeliveryResult send(OutboxMessage message) {
      sent.increment();
      return DeliveryResult.delivered();
    }

    @Override
    public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
      sent.add(messages.size());
      return Collections.nCopies(messages.size(), DeliveryResult.delivered());
    }
  }

  private Run relay(String variant, int batch, boolean delete, int n, String mode, int repeat, JdbcProfile profile)
      throws Exception {
    int threads = Integer.parseInt(variant.replaceAll("relay x(\\d+).*", "$1"));
    DataSource ds = profile == null ? pools.get(variant) : profile.wrap(pools.get(variant));
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(ds).dialect(JdbcDialect.POSTGRESQL).table(table).build())
        .build();
    AtomicLong done = new AtomicLong();
    AtomicLong end = new AtomicLong();
    CountDownLatch all = new CountDownLatch(1);
    OutboxListener listener = new OutboxListener() {
      @Override
      public void delivered(String relay, OutboxMessage message, Duration sinceEnqueue) {
        if (done.incrementAndGet() == n) {
          end.set(System.nanoTime());
          all.countDown();
        }
      }

      @Override
      public void relayError(String relay, Throwable error) {
        System.err.println("relay error: " + error);
      }
    };
    Sink sink = new Sink();
    OutboxRelay relay = OutboxRelay.builder(outbox).name("bench").route("sink", sink).threads(threads)
        .batchSize(batch).deleteDelivered(delete).listener(listener).build();
    long db0 = Cpu.ticksOf("postgres");
    long cpu0 = Cpu.self();
    long t0 = System.nanoTime();
    relay.start();
    boolean finished;
    try {
      finished = all.await(timeoutSeconds, TimeUnit.SECONDS);
    } finally {
      relay.close();
    }
    long cpu1 = Cpu.self();
    long db1 = Cpu.ticksOf("postgres");
    if (!finished) {
      throw new IllegalStateException(variant + " batch " + batch + " delivered only " + done.get()
          + " of " + n + " events in " + timeoutSeconds + " s");
    }
    verify(n, delete, variant + " batch " + batch);
    double s = (end.get() - t0) / 1e9;
    return new Run(variant, mode, batch, repeat, n, s, Cpu.ticksToMicros(cpu1 - cpu0) / n,
        Cpu.ticksToMicros(db1 - db0) / n);
  }

  private Run baseline(int batch, boolean delete, int n, String mode, int repeat) throws Exception {
    return baselineOn(pools.values().iterator().next(), batch, delete, n, mode, repeat);
  }

  /** The simplest hand-written drain: one thread, one transaction per batch, rows locked while they are sent. */
  private Run baselineOn(DataSource ds, int batch, boolean delete, int n, String mode, int repeat) throws Exception {
    Sink sink = new Sink();
    String select = "SELECT seq, id, event_type, aggregate_type, aggregate_id, payload, headers, destination,"
        + " attempts, created_at FROM " + table + " WHERE status = 'pending' ORDER BY available_at, seq LIMIT ?"
        + " FOR UPDATE SKIP LOCKED";
    String finish = delete
        ? "DELETE FROM " + table + " WHERE seq = ANY(?)"
        : "UPDATE " + table + " SET status = 'delivered', delivered_at = ?, attempts = attempts + 1 WHERE seq = ANY(?)";
    long db0 = Cpu.ticksOf("postgres");
    long cpu0 = Cpu.self();
    long t0 = System.nanoTime();
    long total = 0;
    long deadline = t0 + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      while (System.nanoTime() < deadline) {
        List<OutboxMessage> messages = new ArrayList<>(batch);
        Long[] seqs;
        try (PreparedStatement ps = c.prepareStatement(select)) {
          ps.setInt(1, batch);
          List<Long> s = new ArrayList<>(batch);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              s.add(rs.getLong(1));
              messages.add(new OutboxMessage(UUID.fromString(rs.getString(2).trim()), rs.getString(3),
                  rs.getString(4), rs.getString(5), rs.getString(6), Map.of(), rs.getString(8), rs.getInt(9) + 1,
                  Instant.ofEpochMilli(rs.getLong(10))));
            }
          }
          seqs = s.toArray(new Long[0]);
        }
        if (seqs.length == 0) {
          c.commit();
          break;
        }
        List<DeliveryResult> results = sink.sendAll(messages);
        if (results.size() != messages.size()) {
          throw new IllegalStateException("transport returned " + results.size() + " results");
        }
        try (PreparedStatement ps = c.prepareStatement(finish)) {
          int i = 1;
          if (!delete) {
            ps.setLong(i++, System.currentTimeMillis());
          }
          Array array = c.createArrayOf("bigint", seqs);
          ps.setArray(i, array);
          total += ps.executeUpdate();
        }
        c.commit();
      }
      c.setAutoCommit(true);
    }
    double s = (System.nanoTime() - t0) / 1e9;
    long cpu1 = Cpu.self();
    long db1 = Cpu.ticksOf("postgres");
    if (total != n) {
      throw new IllegalStateException("baseline drained " + total + " of " + n + " events");
    }
    verify(n, delete, "baseline batch " + batch);
    return new Run("baseline", mode, batch, repeat, n, s, Cpu.ticksToMicros(cpu1 - cpu0) / n,
        Cpu.ticksToMicros(db1 - db0) / n);
  }

  /**
   * An experiment, not a competitor: the relay's protocol written by hand on one thread (claim in its own
   * transaction, send, mark in a second one), without the relay's isolation-level reads. With {@code hot}, the claim
   * leaves {@code available_at} alone and skips rows whose lease is running instead, so that on a table with free
   * space in its pages (fillfactor 70) the claim is a HOT update that writes no index entries.
   */
  private Run twoTransactions(String variant, String tbl, boolean hot, int batch, boolean delete, int n, String mode,
      int repeat) throws Exception {
    DataSource ds = pools.values().iterator().next();
    Sink sink = new Sink();
    String claim = hot
        ? "UPDATE " + tbl + " SET lease_owner = ?, lease_until = ? WHERE seq IN (SELECT o.seq FROM " + tbl + " o"
            + " WHERE o.status = 'pending' AND o.available_at <= ? AND (o.lease_until IS NULL OR o.lease_until < ?)"
            + " AND (o.ordered = FALSE OR NOT EXISTS (SELECT 1 FROM " + tbl + " p WHERE p.ordered = TRUE"
            + " AND p.aggregate_type = o.aggregate_type AND p.aggregate_id = o.aggregate_id"
            + " AND p.status IN ('pending', 'dead') AND p.seq < o.seq))"
            + " ORDER BY o.available_at, o.seq LIMIT ? FOR UPDATE SKIP LOCKED) RETURNING seq, id, event_type,"
            + " aggregate_type, aggregate_id, payload, headers, destination, attempts, attempt_base, created_at"
        : claimPostgres(tbl);
    String token = "exp/" + UUID.randomUUID();
    long db0 = Cpu.ticksOf("postgres");
    long cpu0 = Cpu.self();
    long t0 = System.nanoTime();
    long deadline = t0 + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    long total = 0;
    while (System.nanoTime() < deadline) {
      long now = System.currentTimeMillis();
      List<Long> seqs = new ArrayList<>(batch);
      List<OutboxMessage> messages = new ArrayList<>(batch);
      try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(claim)) {
        ps.setString(1, token);
        ps.setLong(2, now + 60_000);
        ps.setLong(3, hot ? now : now + 60_000);
        ps.setLong(4, now);
        ps.setInt(5, batch);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            seqs.add(rs.getLong(1));
            messages.add(new OutboxMessage(UUID.fromString(rs.getString(2).trim()), rs.getString(3),
                rs.getString(4), rs.getString(5), rs.getString(6), Map.of(), rs.getString(8), rs.getInt(9) + 1,
                Instant.ofEpochMilli(rs.getLong(11))));
          }
        }
      }
      if (seqs.isEmpty()) {
        break;
      }
      sink.sendAll(messages);
      // Outbox.finish, as written there
      String marks = String.join(", ", Collections.nCopies(seqs.size(), "?"));
      String sql = delete
          ? "DELETE FROM " + tbl + " WHERE lease_owner = ? AND seq IN (" + marks + ")"
          : "UPDATE " + tbl + " SET status = 'delivered', delivered_at = ?, attempts = attempts + 1,"
              + " lease_owner = NULL, lease_until = NULL, last_error = NULL WHERE lease_owner = ? AND seq IN ("
              + marks + ")";
      try (Connection c = ds.getConnection()) {
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          int i = 1;
          if (!delete) {
            ps.setLong(i++, now);
          }
          ps.setString(i++, token);
          for (long s : seqs) {
            ps.setLong(i++, s);
          }
          total += ps.executeUpdate();
        }
        c.commit();
        c.setAutoCommit(true);
      }
    }
    double s = (System.nanoTime() - t0) / 1e9;
    long cpu1 = Cpu.self();
    long db1 = Cpu.ticksOf("postgres");
    if (total != n) {
      throw new IllegalStateException(variant + " drained " + total + " of " + n + " events");
    }
    verify(tbl, n, delete, variant + " batch " + batch);
    return new Run(variant, mode, batch, repeat, n, s, Cpu.ticksToMicros(cpu1 - cpu0) / n,
        Cpu.ticksToMicros(db1 - db0) / n);
  }

  // ----------------------------------------------------------------------------------------------------- explain

  /** The claim statement {@code JdbcOutboxStore} sends on PostgreSQL for {@code table} (read from the store). */
  static String claimPostgres(String table) {
    return outboxSql(table, JdbcDialect.POSTGRESQL);
  }

  /** The claiming select {@code JdbcOutboxStore} sends on MariaDB and H2 for {@code table}. */
  static String claimSelect(String table) {
    return outboxSql(table, JdbcDialect.MARIADB);
  }

  private static String outboxSql(String table, JdbcDialect dialect) {
    DataSource unused = (DataSource) java.lang.reflect.Proxy.newProxyInstance(DataSource.class.getClassLoader(),
        new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
          throw new UnsupportedOperationException("no connection is needed to read a statement");
        });
    return JdbcOutboxStore.builder(unused).dialect(dialect).table(table).build().claimStatement();
  }


  private void explainPostgres(int rows, int pending) throws SQLException {
    String x = table + "_x";
    System.out.println();
    System.out.println("## PostgreSQL: the claim's plan on " + rows + " rows (" + pending + " pending)");
    System.out.println();
    BenchSupport.createTables(admin, JdbcDialect.POSTGRESQL, x);
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(admin).dialect(JdbcDialect.POSTGRESQL).table(x).build())
        .build();
    long t0 = System.nanoTime();
    try (Connection c = admin.getConnection()) {
      c.setAutoCommit(false);
      outbox.enqueueAll(JdbcTransaction.of(c), List.of(BenchSupport.event(0, payload, null)));
      c.commit();
      c.setAutoCommit(true);
      // the rest server-side, copying the enqueued row: the oldest (rows - pending) are delivered
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + x + " (id, event_type, aggregate_type,"
          + " aggregate_id, ordered, payload, headers, destination, status, attempts, attempt_base, available_at,"
          + " created_at, delivered_at) SELECT gen_random_uuid()::text, p.event_type, p.aggregate_type, 'o-' || g,"
          + " p.ordered, p.payload, p.headers, p.destination, CASE WHEN g <= ? THEN 'delivered' ELSE 'pending' END,"
          + " CASE WHEN g <= ? THEN 1 ELSE 0 END, 0, p.available_at + g / 100, p.created_at + g / 100,"
          + " CASE WHEN g <= ? THEN p.created_at + g / 100 END FROM " + x + " p CROSS JOIN generate_series(1, ?) g")) {
        int delivered = rows - pending;
        ps.setInt(1, delivered);
        ps.setInt(2, delivered);
        ps.setInt(3, delivered);
        ps.setInt(4, rows - 1);
        ps.executeUpdate();
      }
      try (Statement st = c.createStatement()) {
        st.execute("VACUUM ANALYZE " + x);
      }
      System.out.println(BenchSupport.fmt("filled in %.1f s (one event through Outbox.enqueueAll, the rest by"
          + " INSERT ... SELECT generate_series), then VACUUM ANALYZE", (System.nanoTime() - t0) / 1e9));
      System.out.println();
      System.out.println("| status | rows |");
      System.out.println("| --- | ---: |");
      for (String l : BenchSupport.lines(c, "SELECT status, count(*) FROM " + x + " GROUP BY status ORDER BY 1")) {
        String[] p = l.split(" \\| ");
        System.out.println("| " + p[0] + " | " + p[1] + " |");
      }
      System.out.println();
      System.out.println("| relation | size |");
      System.out.println("| --- | ---: |");
      for (String l : BenchSupport.lines(c, "SELECT c.relname, pg_size_pretty(pg_relation_size(c.oid)) FROM pg_class c"
          + " WHERE c.relname = '" + x + "' OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = '" + x
          + "'::regclass) ORDER BY pg_relation_size(c.oid) DESC")) {
        String[] p = l.split(" \\| ");
        System.out.println("| " + p[0].replace(x, "<table>") + " | " + p[1] + " |");
      }
      System.out.println("| total (pg_total_relation_size) | "
          + BenchSupport.scalar(c, "SELECT pg_size_pretty(pg_total_relation_size('" + x + "'))") + " |");
      String claim = claimPostgres(x);
      System.out.println();
      System.out.println("Claim statement, as Outbox sends it:");
      System.out.println();
      System.out.println("```sql");
      System.out.println(claim.replace(x, "<table>"));
      System.out.println("```");
      long now = System.currentTimeMillis();
      // EXPLAIN ANALYZE runs the UPDATE: in a transaction that is rolled back
      c.setAutoCommit(false);
      // 1. the statement as Outbox sends it, with bind parameters: planned for these values (a custom plan)
      try (PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, BUFFERS) " + claim)) {
        ps.setString(1, "bench/explain");
        ps.setLong(2, now + 60_000);
        ps.setLong(3, now + 60_000);
        ps.setLong(4, now + 1_000_000);
        ps.setInt(5, 100);
        printPlan("EXPLAIN (ANALYZE, BUFFERS) with bind parameters, batch 100 (custom plan):", ps, x);
      }
      c.rollback();
      // 2. the generic plan PostgreSQL may switch to once pgjdbc prepares the statement server-side (after 5 uses).
      // EXECUTE takes no bind parameters, so its arguments are numbers this benchmark computed, not input.
      try (Statement st = c.createStatement()) {
        st.execute("SET LOCAL plan_cache_mode = force_generic_plan");
        st.execute("PREPARE bench_claim AS " + dollars(claim));
      }
      try (PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, BUFFERS) EXECUTE bench_claim('bench/explain', "
          + (now + 60_000) + ", " + (now + 60_000) + ", " + (now + 1_000_000) + ", 100)")) {
        printPlan("EXPLAIN (ANALYZE, BUFFERS) of the prepared statement, plan_cache_mode = force_generic_plan:", ps, x);
      }
      c.rollback();
      try (Statement st = c.createStatement()) {
        st.execute("DEALLOCATE bench_claim");
      }
      c.commit();
      c.setAutoCommit(true);
    } finally {
      BenchSupport.dropTables(admin, x);
    }
  }

  private static void printPlan(String title, PreparedStatement ps, String table) throws SQLException {
    System.out.println();
    System.out.println(title);
    System.out.println();
    System.out.println("```");
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        System.out.println(rs.getString(1).replace(table, "<table>"));
      }
    }
    System.out.println("```");
  }

  /** {@code ?} to {@code $1, $2, ...} for a server-side PREPARE (the statement has no literal question marks). */
  private static String dollars(String sql) {
    StringBuilder b = new StringBuilder();
    int n = 0;
    for (char ch : sql.toCharArray()) {
      if (ch == '?') {
        b.append('$').append(++n);
      } else {
        b.append(ch);
      }
    }
    return b.toString();
  }

  private void explainMariaDb(int rows, int pending) throws SQLException {
    String murl = BenchSupport.mariadbUrl(flags);
    String muser = BenchSupport.mariadbUser(flags);
    String x = table + "_x";
    System.out.println();
    System.out.println("## MariaDB: the claiming select's plan on " + rows + " rows (" + pending + " pending)");
    System.out.println();
    try (HikariDataSource m = BenchSupport.pool(murl, muser, 2, "outbox-bench-mariadb", Map.of())) {
      try {
        BenchSupport.createTables(m, JdbcDialect.MARIADB, x);
        Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(m).dialect(JdbcDialect.MARIADB).table(x).build())
            .build();
        long t0 = System.nanoTime();
        try (Connection c = m.getConnection()) {
          System.out.println("- " + BenchSupport.scalar(c, "SELECT version()"));
          c.setAutoCommit(false);
          outbox.enqueueAll(JdbcTransaction.of(c), List.of(BenchSupport.event(0, payload, null)));
          c.commit();
          try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + x + " (id, event_type, aggregate_type,"
              + " aggregate_id, ordered, payload, headers, destination, status, attempts, attempt_base, available_at,"
              + " created_at, delivered_at) SELECT UUID(), p.event_type, p.aggregate_type, CONCAT('o-', g.seq),"
              + " p.ordered, p.payload, p.headers, p.destination, IF(g.seq <= ?, 'delivered', 'pending'),"
              + " IF(g.seq <= ?, 1, 0), 0, p.available_at + g.seq DIV 100, p.created_at + g.seq DIV 100,"
              + " IF(g.seq <= ?, p.created_at + g.seq DIV 100, NULL) FROM " + x + " p CROSS JOIN seq_1_to_"
              + (rows - 1) + " g")) {
            int delivered = rows - pending;
            ps.setInt(1, delivered);
            ps.setInt(2, delivered);
            ps.setInt(3, delivered);
            ps.executeUpdate();
          }
          c.commit();
          c.setAutoCommit(true);
          try (Statement st = c.createStatement()) {
            st.execute("ANALYZE TABLE " + x);
          }
          System.out.println(BenchSupport.fmt("- filled in %.1f s (one event through Outbox.enqueueAll, the rest by"
              + " INSERT ... SELECT from seq_1_to_N), then ANALYZE TABLE", (System.nanoTime() - t0) / 1e9));
          System.out.println("- rows by status: " + String.join(", ", BenchSupport.lines(c, "SELECT status, count(*)"
              + " FROM " + x + " GROUP BY status ORDER BY 1")));
          String claim = claimSelect(x);
          System.out.println();
          System.out.println("Claiming select, as Outbox sends it:");
          System.out.println();
          System.out.println("```sql");
          System.out.println(claim.replace(x, "<table>"));
          System.out.println("```");
          long now = System.currentTimeMillis();
          c.setAutoCommit(false);
          c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
          for (String prefix : new String[] {"EXPLAIN ", "ANALYZE "}) {
            try (PreparedStatement ps = c.prepareStatement(prefix + claim)) {
              ps.setLong(1, now + 1_000_000);
              ps.setInt(2, 100);
              System.out.println();
              System.out.println(prefix.trim() + " with batch 100:");
              System.out.println();
              System.out.println("```");
              try (ResultSet rs = ps.executeQuery()) {
                int cols = rs.getMetaData().getColumnCount();
                StringBuilder head = new StringBuilder();
                for (int i = 1; i <= cols; i++) {
                  head.append(i > 1 ? " | " : "").append(rs.getMetaData().getColumnLabel(i));
                }
                System.out.println(head);
                while (rs.next()) {
                  StringBuilder b = new StringBuilder();
                  for (int i = 1; i <= cols; i++) {
                    b.append(i > 1 ? " | " : "").append(rs.getString(i));
                  }
                  System.out.println(b.toString().replace(x, "<table>"));
                }
              }
              System.out.println("```");
            }
            c.rollback();
          }
          c.setAutoCommit(true);
        }
      } finally {
        BenchSupport.dropTables(m, x);
      }
    }
  }
}
