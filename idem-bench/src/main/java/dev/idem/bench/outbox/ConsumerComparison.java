package dev.idem.bench.outbox;

import dev.idem.bench.outbox.BenchSupport.Cpu;
import dev.idem.outbox.consumer.ConsumerListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;

/**
 * The method the consumer benchmarks share: variants of one consumer measured side by side in one run. Each variant
 * and effect style runs once first as a discarded priming run; then every repeat runs them all, in reverse order on
 * even repeats. A measurement's clock runs from just before {@link Consumers#consume} to the commit of the last
 * message's transaction; CPU per event is read from {@code /proc} around it: this JVM, the PostgreSQL backends of its
 * pool ({@link InboxTables#backendTicks}; every postgres process as well, for the log, since the server may be
 * shared), and the broker's process. The report gives events/s (median and min-max), CPU per event, and the ratio
 * to the baseline of the same repeat (median and min-max, and the inverse ratio of client and database CPU per
 * event).
 */
public final class ConsumerComparison {
  /** The reference variant. */
  public static final String BASELINE = "baseline";
  /** The inbox consumer built with {@code firstDeliveryOrder(true)}. */
  public static final String FIRST_DELIVERIES = "inbox, first-delivery order";

  private final InboxTables tables;
  private final int events;
  private final LongSupplier brokerTicks;

  /**
   * @param tables the PostgreSQL side of the consumers
   * @param events the messages of one measurement
   * @param brokerTicks the broker's CPU ticks so far ({@code /proc}), or 0 when it cannot be read
   */
  public ConsumerComparison(InboxTables tables, int events, LongSupplier brokerTicks) {
    this.tables = tables;
    this.events = events;
    this.brokerTicks = brokerTicks;
  }

  /**
   * The sizes of a benchmark of consumers that take one message per transaction: {@code --events} (default 20,000),
   * {@code --prefill} (100,000), {@code --repeats} (3), and the consumer's own batch flag.
   */
  public record Sizes(int events, int batch, int prefill, int repeats) {
    /** The sizes from the flags, checked. */
    public static Sizes of(Map<String, String> f, String batchFlag, int batchDefault) {
      Sizes s = new Sizes(Integer.parseInt(f.getOrDefault("events", "20000")),
          Integer.parseInt(f.getOrDefault(batchFlag, String.valueOf(batchDefault))),
          Integer.parseInt(f.getOrDefault("prefill", "100000")), Integer.parseInt(f.getOrDefault("repeats", "3")));
      if (s.events < 1 || s.batch < 1 || s.prefill < 0 || s.repeats < 1) {
        throw new IllegalArgumentException("--events, --" + batchFlag + " and --repeats must be positive and"
            + " --prefill not negative, got " + s.events + ", " + s.batch + ", " + s.repeats + " and " + s.prefill);
      }
      return s;
    }
  }

  /** The PostgreSQL side of the consumers. */
  public InboxTables tables() {
    return tables;
  }

  /** The messages of one measurement. */
  public int events() {
    return events;
  }

  /** One consumer under test: a variant is a name (the first, {@link #BASELINE}, is the reference). */
  public interface Consumers {
    /** Gets the {@code events} messages of one measurement ready; not timed. */
    default void prepare(String variant, String style) throws Exception {}

    /**
     * Consumes the {@code events} messages prepared, applying the effect of each in PostgreSQL.
     *
     * @return {@link System#nanoTime()} at the commit of the last message's transaction
     */
    long consume(String variant, String style) throws Exception;
  }

  /** One measurement. */
  record Run(double rate, double jvmMicros, double dbMicros, double brokerMicros, double allDbMicros) {
    double clientAndDbMicros() {
      return jvmMicros + dbMicros;
    }
  }

  /** Measures one variant once. */
  Run run(Consumers consumers, String variant, String style) throws Exception {
    consumers.prepare(variant, style);
    long broker0 = brokerTicks.getAsLong();
    long all0 = Cpu.ticksOf("postgres");
    long db0 = tables.backendTicks();
    long cpu0 = Cpu.self();
    long start = System.nanoTime();
    long end = consumers.consume(variant, style);
    long cpu1 = Cpu.self();
    long db1 = tables.backendTicks();
    long all1 = Cpu.ticksOf("postgres");
    long broker1 = brokerTicks.getAsLong();
    double seconds = (end - start) / 1e9;
    tables.analyze();
    return new Run(events / seconds, Cpu.ticksToMicros(cpu1 - cpu0) / events, Cpu.ticksToMicros(db1 - db0) / events,
        Cpu.ticksToMicros(broker1 - broker0) / events, Cpu.ticksToMicros(all1 - all0) / events);
  }

  /**
   * Priming runs, then {@code repeats} repeats of every style and variant in alternating order, each repeat followed by
   * the ratios to the baseline of that repeat; prints the table and returns its rows.
   */
  List<String> compare(Consumers consumers, List<String> styles, List<String> variants, int repeats) throws Exception {
    for (String style : styles) {
      for (String variant : variants) {
        run(consumers, variant, style); // priming (JIT, caches), discarded
      }
    }
    Map<String, List<Run>> runs = new LinkedHashMap<>();
    for (int r = 1; r <= repeats; r++) {
      for (String style : styles) {
        List<String> order = new ArrayList<>(variants);
        if (r % 2 == 0) {
          Collections.reverse(order);
        }
        for (String variant : order) {
          Run run = run(consumers, variant, style);
          runs.computeIfAbsent(style + "|" + variant, k -> new ArrayList<>()).add(run);
          System.out.println(BenchSupport.fmt("  repeat %d %-10s %-10s %8.0f events/s  cpu %5.1f us/event (jvm)"
              + " %5.1f (its postgres backends; all postgres processes %5.1f) %5.1f (broker)  load %s", r, style,
              variant, run.rate(), run.jvmMicros(), run.dbMicros(), run.allDbMicros(), run.brokerMicros(),
              BenchSupport.loadAverage()));
        }
        for (String variant : variants.subList(1, variants.size())) {
          List<Run> rs = runs.get(style + "|" + variant);
          System.out.println(BenchSupport.fmt("  repeat %d %-10s %-10s %.2f of %s", r, style, variant,
              rs.get(r - 1).rate() / runs.get(style + "|" + BASELINE).get(r - 1).rate(), BASELINE));
        }
      }
    }
    List<String> table = report(runs, styles, variants, repeats);
    System.out.println();
    table.forEach(System.out::println);
    return table;
  }

  /**
   * After priming runs, one run of each style and variant through {@link InboxTables#profile}: prints where the JDBC
   * time goes, per message. The wrapper adds overhead, so these runs are not compared.
   */
  void profile(Consumers consumers, List<String> styles, List<String> variants) throws Exception {
    for (String style : styles) {
      for (String variant : variants) {
        run(consumers, variant, style); // priming
      }
    }
    for (String style : styles) {
      for (String variant : variants) {
        tables.profile.reset();
        Run run = run(consumers, variant, style);
        System.out.println(BenchSupport.fmt("%n%s %s, profiled: %,.0f events/s (per batch = per message)", style,
            variant, run.rate()));
        tables.profile.report(events, events / run.rate(), 1).forEach(System.out::println);
      }
    }
  }

  /**
   * {@link #measure} of the baseline, the inbox and the inbox in its first-delivery order, with an effect per message
   * (one transaction per message).
   */
  void measureOneByOne(Consumers consumers, int repeats) throws Exception {
    measure(consumers, List.of("per-record"), List.of(BASELINE, "inbox", FIRST_DELIVERIES), repeats);
  }

  /**
   * {@link #profile} when the tables were made with {@code --profile true}, else {@link #compare}.
   *
   * @return the rows of the table {@link #compare} printed (none after {@link #profile})
   */
  public List<String> measure(Consumers consumers, List<String> styles, List<String> variants, int repeats)
      throws Exception {
    if (tables.profile != null) {
      profile(consumers, styles, variants);
      return List.of();
    }
    return compare(consumers, styles, variants, repeats);
  }

  private static List<String> report(Map<String, List<Run>> runs, List<String> styles, List<String> variants,
      int repeats) {
    List<String> table = new ArrayList<>();
    table.add("| effects | variant | events/s, median (min-max) | CPU us/event jvm + postgres | broker CPU"
        + " us/event | ratio to baseline [inverse CPU ratio] |");
    table.add("| --- | --- | ---: | ---: | ---: | --- |");
    for (String style : styles) {
      List<Run> base = runs.get(style + "|" + BASELINE);
      for (String variant : variants) {
        List<Run> rs = runs.get(style + "|" + variant);
        double[] rates = rs.stream().mapToDouble(Run::rate).toArray();
        double[] ratios = new double[repeats];
        double[] cpuRatios = new double[repeats];
        for (int i = 0; i < repeats; i++) {
          ratios[i] = rs.get(i).rate() / base.get(i).rate();
          cpuRatios[i] = base.get(i).clientAndDbMicros() / rs.get(i).clientAndDbMicros();
        }
        double jvm = BenchSupport.median(rs.stream().mapToDouble(Run::jvmMicros).toArray());
        double db = BenchSupport.median(rs.stream().mapToDouble(Run::dbMicros).toArray());
        double broker = BenchSupport.median(rs.stream().mapToDouble(Run::brokerMicros).toArray());
        table.add(BenchSupport.fmt("| %s | %s | %,.0f (%,.0f-%,.0f) | %.1f + %.1f | %.1f | %.2f (%.2f-%.2f)"
            + " [%.2f] |", style, variant, BenchSupport.median(rates), BenchSupport.min(rates),
            BenchSupport.max(rates), jvm, db, broker, BenchSupport.median(ratios), BenchSupport.min(ratios),
            BenchSupport.max(ratios), BenchSupport.median(cpuRatios)));
      }
    }
    return table;
  }

  /**
   * The end of a measurement: counts the messages whose transaction committed and keeps the moment the
   * {@code expected}-th did. Thread-safe.
   */
  public static final class LastCommit {
    private final int expected;
    private final AtomicInteger committed = new AtomicInteger();
    private final CountDownLatch done = new CountDownLatch(1);
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile long at;

    /** The end of a measurement of {@code expected} messages. */
    public LastCommit(int expected) {
      this.expected = expected;
    }

    /** {@code messages} more messages committed (duplicates not counted). */
    public void committed(int messages) {
      int before = committed.getAndAdd(messages);
      if (before < expected && before + messages >= expected) {
        at = System.nanoTime();
        done.countDown();
      }
    }

    /** The measurement failed: {@link #await} throws {@code error} at once. */
    public void failed(Throwable error) {
      failure.compareAndSet(null, error);
      done.countDown();
    }

    /** Hears of an Idem consumer's commits. */
    ConsumerListener listener() {
      return new ConsumerListener() {
        @Override
        public void committed(String consumer, String source, long nextOffset, int messages, int duplicates) {
          LastCommit.this.committed(messages - duplicates);
        }
      };
    }

    /**
     * Waits for the last commit; returns its {@link System#nanoTime()}.
     *
     * @throws IllegalStateException after {@code timeout}, naming {@code what} and how far it got
     */
    public long await(Duration timeout, String what) throws InterruptedException {
      if (!done.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException(what + " committed " + committed.get() + " of " + expected
            + " messages in " + timeout);
      }
      if (failure.get() != null) {
        throw new IllegalStateException(what + " failed after " + committed.get() + " of " + expected
            + " messages: " + failure.get(), failure.get());
      }
      return at;
    }
  }
}
