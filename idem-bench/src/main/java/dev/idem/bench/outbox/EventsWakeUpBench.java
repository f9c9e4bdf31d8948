package dev.idem.bench.outbox;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxTransport;
import dev.idem.outbox.events.EventRoute;
import dev.idem.outbox.events.Events;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Domain events on PostgreSQL, from publish to delivery, with and without the relay's wake-up after commit:
 * {@code --producers} threads (default 2) sharing one schedule publish an event per transaction
 * ({@link Events#inTransaction}, {@link Events#publish(Object)}) at a fixed rate on an absolute schedule (no
 * coordinated omission), and a relay on the same outbox object, at its default poll interval unless given, hands
 * them to a transport that notes when each arrives. The variants alternate within one run: {@code wake} (the
 * default, {@code wakeOnCommit(true)}) and {@code poll} ({@code wakeOnCommit(false)}). The first {@code --warmup}
 * seconds of each are not recorded. Claims per second show how far wake-ups coalesce.
 *
 * <pre>
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.outbox.EventsWakeUpBench
 *     [--rate 1000] [--seconds 25] [--warmup 5] [--passes 1] [--poll-ms 50] [--threads 1] [--batch 100]
 *     [--producers 2]
 *     [--url ... --user ...]
 * </pre>
 */
public final class EventsWakeUpBench {
  /** The benchmark's event: its number and when it was due, as the producer's JSON. */
  record OrderPlaced(long n, long due) {
    String json() {
      return "{\"n\":" + n + ",\"t\":" + due + "}";
    }
  }

  private final int rate;
  private final int seconds;
  private final int warmup;
  private final long pollMs;
  private final int threads;
  private final int batch;
  private final int producers;
  private final HikariDataSource admin;
  private final HikariDataSource pool;
  private final String table;

  private EventsWakeUpBench(Map<String, String> f) {
    String url = BenchSupport.postgresUrl(f);
    String user = BenchSupport.postgresUser(f);
    this.rate = Integer.parseInt(f.getOrDefault("rate", "1000"));
    this.seconds = Integer.parseInt(f.getOrDefault("seconds", "25"));
    this.warmup = Integer.parseInt(f.getOrDefault("warmup", "5"));
    this.pollMs = Long.parseLong(f.getOrDefault("poll-ms", "50"));
    this.threads = Integer.parseInt(f.getOrDefault("threads", "1"));
    this.batch = Integer.parseInt(f.getOrDefault("batch", "100"));
    this.producers = Integer.parseInt(f.getOrDefault("producers", "2"));
    if (producers < 1 || producers > 32) {
      throw new IllegalArgumentException("--producers must be 1 to 32, got " + producers);
    }
    if (rate < 1 || rate > 20_000 || seconds < 1 || seconds > 600 || warmup < 0 || pollMs < 1) {
      throw new IllegalArgumentException("--rate must be 1 to 20000, --seconds 1 to 600, --warmup not negative,"
          + " --poll-ms positive");
    }
    this.admin = BenchSupport.pool(url, user, 1, "events-admin", Map.of());
    this.pool = BenchSupport.pool(url, user, threads + producers + 2, "events-bench", Map.of());
    this.table = BenchSupport.uniqueTable("bench_events");
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> f = BenchSupport.flags(args);
    EventsWakeUpBench bench = new EventsWakeUpBench(f);
    int passes = Integer.parseInt(f.getOrDefault("passes", "1"));
    Thread cleanup = new Thread(() -> BenchSupport.dropTables(bench.admin, bench.table), "events-cleanup");
    Runtime.getRuntime().addShutdownHook(cleanup);
    try {
      BenchSupport.createTables(bench.admin, JdbcDialect.POSTGRESQL, bench.table);
      System.out.println("# Domain events: publish -> delivery latency with and without the wake-up, " + Instant.now());
      System.out.println();
      System.out.println("- JVM " + Runtime.version() + ", " + Runtime.getRuntime().availableProcessors()
          + " CPUs; load average " + BenchSupport.loadAverage());
      List<Result> results = new ArrayList<>();
      for (int pass = 1; pass <= passes; pass++) {
        List<Boolean> order = pass % 2 == 1 ? List.of(true, false) : List.of(false, true);
        for (boolean wake : order) {
          Result r = bench.run(wake, pass);
          results.add(r);
          System.out.println(r.line());
        }
      }
      System.out.println();
      System.out.println("## Publish -> delivery, ms (" + bench.seconds + " s at " + bench.rate + " events/s after "
          + bench.warmup + " s warm-up; one event per transaction, " + bench.producers + " producer thread(s); poll "
          + bench.pollMs + " ms; relay x" + bench.threads + ", batch " + bench.batch + ")");
      System.out.println();
      System.out.println("| wake-up | pass | published/s | delivered | claims/s | events/claim | from commit p50 | p90"
          + " | p99 | max | from intended p50 | p99 |");
      System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
      results.forEach(r -> System.out.println(r.row()));
      System.out.println();
      for (int pass = 1; pass <= passes; pass++) {
        Result wake = find(results, true, pass);
        Result poll = find(results, false, pass);
        System.out.println(BenchSupport.fmt("pass %d: with the wake-up, from-commit p50 is %.2fx and p99 %.2fx that of"
            + " polling alone", pass, ratio(wake.fromCommit, poll.fromCommit, 50),
            ratio(wake.fromCommit, poll.fromCommit, 99)));
      }
    } finally {
      BenchSupport.dropTables(bench.admin, bench.table);
      Runtime.getRuntime().removeShutdownHook(cleanup);
      bench.pool.close();
      bench.admin.close();
    }
  }

  private static Result find(List<Result> results, boolean wake, int pass) {
    return results.stream().filter(r -> r.wake == wake && r.pass == pass).findFirst().orElseThrow();
  }

  private static double ratio(Histogram a, Histogram b, double percentile) {
    return (double) a.getValueAtPercentile(percentile) / Math.max(1, b.getValueAtPercentile(percentile));
  }

  private record Result(boolean wake, int pass, double publishedPerSecond, long measured, long delivered,
      double claimsPerSecond, double perClaim, Histogram fromCommit, Histogram fromIntended) {
    String line() {
      return BenchSupport.fmt("pass %d %-4s published %.0f/s, delivered %d/%d, %.0f claims/s; from commit p50 %.2f"
              + " p99 %.2f max %.2f ms (load %s)", pass, wake ? "wake" : "poll", publishedPerSecond, delivered,
          measured, claimsPerSecond, ms(fromCommit, 50), ms(fromCommit, 99), fromCommit.getMaxValue() / 1000.0,
          BenchSupport.loadAverage());
    }

    String row() {
      return BenchSupport.fmt("| %s | %d | %.0f | %d/%d | %.0f | %.1f | %.2f | %.2f | **%.2f** | %.2f | %.2f | %.2f |",
          wake ? "yes" : "no (poll)", pass, publishedPerSecond, delivered, measured, claimsPerSecond, perClaim,
          ms(fromCommit, 50), ms(fromCommit, 90), ms(fromCommit, 99), fromCommit.getMaxValue() / 1000.0,
          ms(fromIntended, 50), ms(fromIntended, 99));
    }

    private static double ms(Histogram h, double percentile) {
      return h.getValueAtPercentile(percentile) / 1000.0;
    }
  }

  private static boolean allDelivered(AtomicLongArray deliveredAt) {
    for (int i = deliveredAt.length() - 1; i >= 0; i--) {
      if (deliveredAt.get(i) == 0) {
        return false;
      }
    }
    return true;
  }

  private Result run(boolean wake, int pass) throws Exception {
    int total = (warmup + seconds) * rate;
    int firstMeasured = warmup * rate;
    long period = 1_000_000_000L / rate;
    AtomicLongArray deliveredAt = new AtomicLongArray(total);
    OutboxTransport sink = new OutboxTransport() {
      @Override
      public DeliveryResult send(OutboxMessage message) {
        return sendAll(List.of(message)).get(0);
      }

      @Override
      public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
        long now = System.nanoTime();
        for (OutboxMessage m : messages) {
          deliveredAt.compareAndSet((int) RelayLatencyBench.field(m.payload(), "\"n\":"), 0, now);
        }
        return Collections.nCopies(messages.size(), DeliveryResult.delivered());
      }
    };
    Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(pool).dialect(JdbcDialect.POSTGRESQL).table(table)
        .build()).build();
    Events events = Events.builder(outbox).serializer(e -> ((OrderPlaced) e).json())
        .route(EventRoute.of(OrderPlaced.class, "order.placed", "sink:bench")).build();
    LongAdder claims = new LongAdder();
    LongAdder claimed = new LongAdder();
    OutboxRelay relay = OutboxRelay.builder(outbox).name(wake ? "wake" : "poll").route("sink", sink)
        .threads(threads).batchSize(batch).pollInterval(Duration.ofMillis(pollMs)).wakeOnCommit(wake)
        .deleteDelivered(true).listener(new OutboxListener() {
          @Override
          public void claimed(String relay, int count) {
            claims.increment();
            claimed.add(count);
          }
        }).build();
    long[] intended = new long[total];
    long[] committed = new long[total];
    long measuredStart;
    long claimsAtStart;
    relay.start();
    try {
      long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
      measuredStart = start + firstMeasured * period;
      long[] claimsAt = {-1};
      // event i is due at start + i * period; producer k publishes the events i with i % producers == k
      List<Thread> producing = new ArrayList<>();
      List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
      for (int k = 0; k < producers; k++) {
        int first = k;
        Thread t = new Thread(() -> {
          try {
            for (int i = first; i < total; i += producers) {
              long due = start + i * period;
              long wait;
              while ((wait = due - System.nanoTime()) > 0) {
                LockSupport.parkNanos(wait);
              }
              if (i == firstMeasured) {
                claimsAt[0] = claims.sum();
              }
              intended[i] = due;
              OrderPlaced event = new OrderPlaced(i, due);
              events.inTransaction(tx -> Events.publish(event));
              committed[i] = System.nanoTime();
            }
          } catch (Throwable e) {
            errors.add(e);
          }
        }, "producer-" + k);
        producing.add(t);
        t.start();
      }
      for (Thread t : producing) {
        t.join();
      }
      if (!errors.isEmpty()) {
        throw new IllegalStateException("a producer failed", errors.get(0));
      }
      claimsAtStart = claimsAt[0];
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!allDelivered(deliveredAt) && System.nanoTime() < deadline) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
    } finally {
      relay.close();
    }
    long lastCommit = 0;
    for (long c : committed) {
      lastCommit = Math.max(lastCommit, c);
    }
    double measuredSeconds = (lastCommit - measuredStart) / 1e9;
    Histogram fromCommit = new Histogram(TimeUnit.SECONDS.toMicros(120), 3);
    Histogram fromIntended = new Histogram(TimeUnit.SECONDS.toMicros(120), 3);
    long delivered = 0;
    for (int i = firstMeasured; i < total; i++) {
      long at = deliveredAt.get(i);
      if (at == 0) {
        at = System.nanoTime(); // never delivered: counted at the end of the run, so it weighs on the tail
      } else {
        delivered++;
      }
      fromCommit.recordValue(Math.max(0, (at - committed[i]) / 1000));
      fromIntended.recordValue(Math.max(0, (at - intended[i]) / 1000));
    }
    long measuredClaims = claims.sum() - Math.max(0, claimsAtStart);
    return new Result(wake, pass, (total - firstMeasured) / measuredSeconds, total - firstMeasured, delivered,
        measuredClaims / measuredSeconds, claims.sum() == 0 ? 0 : (double) claimed.sum() / claims.sum(), fromCommit,
        fromIntended);
  }
}
