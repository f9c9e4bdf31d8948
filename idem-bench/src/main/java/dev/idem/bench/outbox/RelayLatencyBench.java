package dev.idem.bench.outbox;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxTransport;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Outbox latency on PostgreSQL, from enqueue to delivery: a producer enqueues single events, each in its own
 * committed transaction, at a steady rate; a relay delivers them to a transport that notes when each arrives.
 *
 * <p>The producer ({@code --producers} threads sharing one schedule, default 1) keeps an absolute schedule (event i is due at start + i / rate), so a slow insert does not lower
 * the offered rate; latency is measured from that intended time (no coordinated omission), and also from the
 * commit. The first {@code --warmup} seconds are not recorded. Each variant names a poll interval and whether the
 * producer calls {@link OutboxRelay#wakeUp()} after each commit: {@code 10}, {@code 50}, {@code 50+wake}.
 *
 * <pre>
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.outbox.RelayLatencyBench
 *     [--rate 1000] [--seconds 30] [--warmup 5] [--variants 10,50,50+wake] [--threads 1] [--batch 100]
 *     [--producers 1] [--passes 1] [--prefill 100000] [--payload 256] [--delete false] [--url ... --user ...]
 * </pre>
 */
public final class RelayLatencyBench {
  private final String url;
  private final String user;
  private final int rate;
  private final int seconds;
  private final int warmup;
  private final int threads;
  private final int batch;
  private final int payload;
  private final boolean delete;
  private final int producers;
  private final HikariDataSource admin;
  private final HikariDataSource producerPool;
  private final HikariDataSource relayPool;
  private final String table;

  private RelayLatencyBench(Map<String, String> f) {
    this.url = BenchSupport.postgresUrl(f);
    this.user = BenchSupport.postgresUser(f);
    this.rate = Integer.parseInt(f.getOrDefault("rate", "1000"));
    this.seconds = Integer.parseInt(f.getOrDefault("seconds", "30"));
    this.warmup = Integer.parseInt(f.getOrDefault("warmup", "5"));
    this.threads = Integer.parseInt(f.getOrDefault("threads", "1"));
    this.batch = Integer.parseInt(f.getOrDefault("batch", "100"));
    this.payload = Integer.parseInt(f.getOrDefault("payload", "256"));
    this.delete = Boolean.parseBoolean(f.getOrDefault("delete", "false"));
    this.producers = Integer.parseInt(f.getOrDefault("producers", "1"));
    if (rate < 1 || seconds < 1 || warmup < 0 || producers < 1) {
      throw new IllegalArgumentException("--rate, --seconds and --producers must be positive, --warmup not negative");
    }
    this.admin = BenchSupport.pool(url, user, 1, "latency-admin", Map.of());
    this.producerPool = BenchSupport.pool(url, user, producers, "latency-producer", Map.of());
    this.relayPool = BenchSupport.pool(url, user, threads + 2, "latency-relay", Map.of());
    this.table = BenchSupport.uniqueTable("bench_outbox_lat");
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> f = BenchSupport.flags(args);
    RelayLatencyBench bench = new RelayLatencyBench(f);
    String[] variants = f.getOrDefault("variants", "10,50,50+wake").split(",");
    int prefill = Integer.parseInt(f.getOrDefault("prefill", "100000"));
    Thread cleanup = new Thread(() -> BenchSupport.dropTables(bench.admin, bench.table), "latency-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    try {
      bench.prepare(prefill);
      int passes = Integer.parseInt(f.getOrDefault("passes", "1"));
      List<Result> results = new ArrayList<>();
      for (int pass = 1; pass <= passes; pass++) {
        List<String> order = new ArrayList<>(List.of(variants));
        if (pass % 2 == 0) {
          Collections.reverse(order); // A B C, then C B A: each variant meets early and late load
        }
        for (String v : order) {
          Result r = bench.run(v.trim(), pass);
          results.add(r);
          System.out.println(r.line());
          bench.vacuum();
        }
      }
      results.sort(Comparator.comparing((Result r) -> List.of(variants).indexOf(r.variant()))
          .thenComparingInt(Result::pass));
      System.out.println();
      System.out.println("## Enqueue -> delivery latency, ms (" + bench.seconds + " s at " + bench.rate
          + " events/s after " + bench.warmup + " s warm-up; " + bench.producers + " producer thread(s); relay x"
          + bench.threads + ", batch " + bench.batch
          + (bench.delete ? ", deleteDelivered" : "") + ")");
      System.out.println();
      System.out.println("| poll | wakeUp | pass | offered/s | enqueued/s | delivered | events/claim | from intended p50"
          + " | p90 | p99 | max | from commit p50 | p99 | max | commit lag p99 |");
      System.out.println("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
          + " ---: | ---: |");
      for (Result r : results) {
        System.out.println(r.row());
      }
    } finally {
      BenchSupport.dropTables(bench.admin, bench.table);
      Runtime.getRuntime().removeShutdownHook(cleanup);
      bench.relayPool.close();
      bench.producerPool.close();
      bench.admin.close();
    }
  }

  private void prepare(int prefill) throws SQLException {
    BenchSupport.createTables(admin, JdbcDialect.POSTGRESQL, table);
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(admin).dialect(JdbcDialect.POSTGRESQL).table(table)
        .build()).build();
    try (Connection c = admin.getConnection()) {
      System.out.println("# Outbox relay latency, " + Instant.now());
      System.out.println();
      System.out.println("- " + BenchSupport.scalar(c, "SELECT version()"));
      System.out.println("- JVM " + Runtime.version() + ", " + Runtime.getRuntime().availableProcessors()
          + " CPUs; load average " + BenchSupport.loadAverage());
      c.setAutoCommit(false);
      outbox.enqueueAll(JdbcTransaction.of(c), List.of(BenchSupport.event(-1, payload, null)));
      c.commit();
      c.setAutoCommit(true);
      if (prefill > 1) {
        // history the table would hold in production: delivered rows, server-side copies of one enqueued event
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " (id, event_type, aggregate_type,"
            + " aggregate_id, ordered, payload, headers, destination, status, attempts, attempt_base, available_at,"
            + " created_at, delivered_at) SELECT gen_random_uuid()::text, p.event_type, p.aggregate_type, 'h-' || g,"
            + " p.ordered, p.payload, p.headers, p.destination, 'delivered', 1, 0, p.available_at, p.created_at,"
            + " p.created_at FROM " + table + " p CROSS JOIN generate_series(1, ?) g")) {
          ps.setInt(1, prefill - 1);
          ps.executeUpdate();
        }
      }
      try (Statement st = c.createStatement()) {
        st.execute("UPDATE " + table + " SET status = 'delivered', delivered_at = created_at WHERE status = 'pending'");
      }
      System.out.println("- table " + table + " pre-filled with " + prefill + " delivered events");
      System.out.println();
    }
    vacuum();
  }

  private void vacuum() throws SQLException {
    try (Connection c = admin.getConnection(); Statement st = c.createStatement()) {
      st.execute("VACUUM ANALYZE " + table);
    }
  }

  private record Result(String variant, int pass, long pollMs, boolean wake, int offered, double enqueuedPerSecond,
      long measured, long delivered, double perClaim, Histogram fromIntended, Histogram fromCommit,
      Histogram commitLag) {
    String line() {
      return BenchSupport.fmt("pass %d variant %-8s enqueued %.0f/s, delivered %d/%d; from intended p50 %.1f p99 %.1f max"
              + " %.1f ms; from commit p50 %.1f p99 %.1f ms (load %s)", pass, variant, enqueuedPerSecond, delivered,
          measured, ms(fromIntended, 50), ms(fromIntended, 99), fromIntended.getMaxValue() / 1000.0,
          ms(fromCommit, 50), ms(fromCommit, 99), BenchSupport.loadAverage());
    }

    String row() {
      return BenchSupport.fmt("| %d ms | %s | %d | %d | %.0f | %d/%d | %.1f | %.1f | %.1f | **%.1f** | %.1f | %.1f"
              + " | %.1f | %.1f | %.1f |", pollMs, wake ? "yes" : "no", pass, offered, enqueuedPerSecond, delivered,
          measured, perClaim,
          ms(fromIntended, 50), ms(fromIntended, 90), ms(fromIntended, 99), fromIntended.getMaxValue() / 1000.0,
          ms(fromCommit, 50), ms(fromCommit, 99), fromCommit.getMaxValue() / 1000.0, ms(commitLag, 99));
    }

    private static double ms(Histogram h, double percentile) {
      return h.getValueAtPercentile(percentile) / 1000.0;
    }
  }

  /** Notes, per event number (the payload's "n"), when the relay handed it over. */
  private static final class Recorder implements OutboxTransport {
    final AtomicLongArray deliveredAt;
    final AtomicLong count = new AtomicLong();
    final AtomicLong duplicates = new AtomicLong();

    Recorder(int events) {
      this.deliveredAt = new AtomicLongArray(events);
    }

    @Override
    public DeliveryResult send(OutboxMessage message) {
      note(message, System.nanoTime());
      return DeliveryResult.delivered();
    }

    @Override
    public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
      long now = System.nanoTime();
      for (OutboxMessage m : messages) {
        note(m, now);
      }
      return Collections.nCopies(messages.size(), DeliveryResult.delivered());
    }

    private void note(OutboxMessage m, long now) {
      int n = (int) field(m.payload(), "\"n\":");
      if (deliveredAt.compareAndSet(n, 0, now)) {
        count.incrementAndGet();
      } else {
        duplicates.incrementAndGet();
      }
    }
  }

  /** The long value after {@code key} in a flat JSON object. */
  static long field(String json, String key) {
    int i = json.indexOf(key) + key.length();
    long v = 0;
    boolean negative = json.charAt(i) == '-';
    if (negative) {
      i++;
    }
    for (; i < json.length(); i++) {
      char ch = json.charAt(i);
      if (ch < '0' || ch > '9') {
        break;
      }
      v = v * 10 + (ch - '0');
    }
    return negative ? -v : v;
  }

  private Result run(String variant, int pass) throws Exception {
    boolean wake = variant.endsWith("+wake");
    long pollMs = Long.parseLong(wake ? variant.substring(0, variant.length() - "+wake".length()) : variant);
    int total = (warmup + seconds) * rate;
    int firstMeasured = warmup * rate;
    long period = 1_000_000_000L / rate;
    Recorder recorder = new Recorder(total);
    Outbox relayOutbox = Outbox.builder(JdbcOutboxStore.builder(relayPool).dialect(JdbcDialect.POSTGRESQL)
        .table(table).build()).build();
    Outbox producerOutbox = Outbox.builder(JdbcOutboxStore.builder(producerPool).dialect(JdbcDialect.POSTGRESQL)
        .table(table).build()).build();
    LongAdder claims = new LongAdder();
    LongAdder claimedEvents = new LongAdder();
    OutboxRelay relay = OutboxRelay.builder(relayOutbox).name("latency").route("sink", recorder).threads(threads)
        .batchSize(batch).pollInterval(Duration.ofMillis(pollMs)).deleteDelivered(delete)
        .listener(new OutboxListener() {
          @Override
          public void claimed(String relay, int count) {
            claims.increment();
            claimedEvents.add(count);
          }
        }).build();
    long[] intended = new long[total];
    long[] committed = new long[total];
    relay.start();
    long measuredStart;
    long lastCommit = 0;
    try {
      long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
      measuredStart = start + firstMeasured * period;
      // event i is due at start + i * period; producer k sends the events i with i % producers == k
      List<Thread> threads = new ArrayList<>();
      List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
      for (int k = 0; k < producers; k++) {
        int first = k;
        Thread t = new Thread(() -> {
          try (Connection c = producerPool.getConnection()) {
            c.setAutoCommit(false);
            for (int i = first; i < total; i += producers) {
              long due = start + i * period;
              long wait;
              while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
              }
              intended[i] = due;
              producerOutbox.enqueue(JdbcTransaction.of(c), BenchSupport.event(i, payload, "\"t\":" + due));
              c.commit();
              committed[i] = System.nanoTime();
              if (wake) {
                relay.wakeUp();
              }
            }
            c.setAutoCommit(true);
          } catch (Throwable e) {
            errors.add(e);
          }
        }, "producer-" + k);
        threads.add(t);
        t.start();
      }
      for (Thread t : threads) {
        t.join();
      }
      if (!errors.isEmpty()) {
        throw new IllegalStateException("a producer failed", errors.get(0));
      }
      for (long c : committed) {
        lastCommit = Math.max(lastCommit, c);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (recorder.count.get() < total && System.nanoTime() < deadline) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
    } finally {
      relay.close();
    }
    Histogram fromIntended = new Histogram(TimeUnit.SECONDS.toMicros(120), 3);
    Histogram fromCommit = new Histogram(TimeUnit.SECONDS.toMicros(120), 3);
    Histogram commitLag = new Histogram(TimeUnit.SECONDS.toMicros(120), 3);
    long delivered = 0;
    for (int i = firstMeasured; i < total; i++) {
      long at = recorder.deliveredAt.get(i);
      commitLag.recordValue(Math.max(0, (committed[i] - intended[i]) / 1000));
      if (at == 0) {
        // never delivered within the run: counted at the end of the run, so that it weighs on the tail
        at = System.nanoTime();
      } else {
        delivered++;
      }
      fromIntended.recordValue(Math.max(0, (at - intended[i]) / 1000));
      fromCommit.recordValue(Math.max(0, (at - committed[i]) / 1000));
    }
    if (recorder.duplicates.get() > 0) {
      System.out.println("  note: " + recorder.duplicates.get() + " duplicate deliveries");
    }
    double enqueuedPerSecond = (total - firstMeasured) / ((lastCommit - measuredStart) / 1e9);
    double perClaim = claims.sum() == 0 ? 0 : (double) claimedEvents.sum() / claims.sum();
    return new Result(variant, pass, pollMs, wake, rate, enqueuedPerSecond, total - firstMeasured, delivered, perClaim,
        fromIntended, fromCommit, commitLag);
  }
}
