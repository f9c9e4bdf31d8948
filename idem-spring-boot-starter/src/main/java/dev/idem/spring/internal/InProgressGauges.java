package dev.idem.spring.internal;

import dev.idem.jdbc.InProgressRecords;
import dev.idem.jdbc.JdbcIdempotencyStore;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Gauges of the records in progress, so that an operator can alert on records stuck in progress (docs/OPERATIONS.md),
 * tagged {@code instance}:
 *
 * <ul>
 *   <li>{@code idem.records.in_progress} (gauge): records in progress
 *   <li>{@code idem.records.in_progress.lease_expired} (gauge): those whose lease had run out at the last read,
 *       waiting for the completer or a client's retry
 *   <li>{@code idem.records.in_progress.oldest.age} (time gauge, seconds): how long the oldest record has been in
 *       progress, 0 when none is
 *   <li>{@code idem.records.uncertain.current} (gauge): records that are uncertain, waiting for a reconciler or an
 *       operator
 * </ul>
 *
 * <p>The figures come from {@link JdbcIdempotencyStore#inProgress(Instant)}, read at most once per refresh interval
 * whatever the scrape rate, off the scraping thread: a scrape that finds the figures older than the interval starts
 * a read in the background and answers with the last figures, so it never waits for the database, even when the
 * database is away (the figures then stay as they were, and one warning is logged until a read succeeds again). The
 * oldest age keeps growing with the clock between reads. Until the first successful read the gauges are NaN.
 * Nothing runs on the request path. Thread-safe.
 *
 * <p>Built on a store, the gauges read on a daemon thread of their own ({@code idem-record-metrics-<instance>},
 * {@link GaugeReadThread}), so that a slow read holds up no other instance's gauges; {@link #close()} stops it and
 * removes the gauges from the registry (the auto-configured bean is closed with the application context).
 */
public final class InProgressGauges implements AutoCloseable {
  /** Records in progress. */
  public static final String IN_PROGRESS = "idem.records.in_progress";
  /** In-progress records whose lease has run out. */
  public static final String LEASE_EXPIRED = "idem.records.in_progress.lease_expired";
  /** Records that are uncertain. */
  public static final String UNCERTAIN = "idem.records.uncertain.current";
  /** Age of the oldest in-progress record. */
  public static final String OLDEST_AGE = "idem.records.in_progress.oldest.age";

  private static final System.Logger LOG = System.getLogger(InProgressGauges.class.getName());

  private final MeterRegistry registry;
  private final List<Meter> meters;
  private final ExecutorService owned;
  private final String instance;
  private final Function<Instant, InProgressRecords> reader;
  private final Clock clock;
  private final long refreshNanos;
  private final Executor executor;
  private final LongSupplier nanoTime;
  private final AtomicBoolean refreshing = new AtomicBoolean();
  private final AtomicLong reads = new AtomicLong();
  private volatile InProgressRecords last;
  private volatile boolean attempted;
  private volatile long lastAttempt;
  private volatile boolean failing;
  private volatile boolean closed;

  /** The gauges of {@code store}'s records, read on a daemon thread of their own; {@link #close()} stops it. */
  public InProgressGauges(MeterRegistry registry, String instance, JdbcIdempotencyStore store, Clock clock,
      Duration refresh) {
    this(registry, instance, Objects.requireNonNull(store, "store")::inProgress, clock, refresh,
        GaugeReadThread.executor("idem-record-metrics-" + instance), System::nanoTime, true);
  }

  /**
   * The gauges of what {@code reader} answers.
   *
   * @param reader reads the figures at the instant given; it runs on {@code executor}
   * @param refresh the shortest time between two reads
   * @param executor where reads run; it stays the caller's, {@link #close()} leaves it running
   * @param nanoTime the monotonic time the refresh interval is measured on
   */
  public InProgressGauges(MeterRegistry registry, String instance, Function<Instant, InProgressRecords> reader,
      Clock clock, Duration refresh, Executor executor, LongSupplier nanoTime) {
    this(registry, instance, reader, clock, refresh, executor, nanoTime, false);
  }

  private InProgressGauges(MeterRegistry registry, String instance, Function<Instant, InProgressRecords> reader,
      Clock clock, Duration refresh, Executor executor, LongSupplier nanoTime, boolean ownsExecutor) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.instance = Objects.requireNonNull(instance, "instance");
    this.reader = Objects.requireNonNull(reader, "reader");
    this.clock = Objects.requireNonNull(clock, "clock");
    if (refresh.isNegative() || refresh.isZero()) {
      throw new IllegalArgumentException("refresh must be positive, got " + refresh);
    }
    this.refreshNanos = refresh.toNanos();
    this.executor = Objects.requireNonNull(executor, "executor");
    this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
    this.owned = ownsExecutor ? (ExecutorService) executor : null;
    meters = List.of(
        Gauge.builder(IN_PROGRESS, this, g -> g.value(false))
            .description("Idempotency records in progress").tag("instance", instance).strongReference(true)
            .register(registry),
        Gauge.builder(LEASE_EXPIRED, this, g -> g.value(true))
            .description("In-progress records whose lease has run out, waiting for the completer or a retry")
            .tag("instance", instance).strongReference(true).register(registry),
        Gauge.builder(UNCERTAIN, this, InProgressGauges::uncertain)
            .description("Uncertain records, waiting for a reconciler or an operator").tag("instance", instance)
            .strongReference(true).register(registry),
        TimeGauge.builder(OLDEST_AGE, this, TimeUnit.SECONDS, InProgressGauges::oldestAgeSeconds)
            .description("How long the oldest in-progress record has been in progress (0 when none is)")
            .tag("instance", instance).strongReference(true).register(registry));
  }

  /**
   * Removes the gauges from the registry and stops the reading thread of gauges built on a store (interrupting a
   * read in progress) without waiting for it. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    meters.forEach(registry::remove);
    if (owned != null) {
      owned.shutdownNow();
    }
  }

  /** Reads made so far, successful or not. */
  public long reads() {
    return reads.get();
  }

  private double value(boolean leaseExpired) {
    InProgressRecords r = current();
    if (r == null) {
      return Double.NaN;
    }
    return leaseExpired ? r.leaseExpired() : r.count();
  }

  private double uncertain() {
    InProgressRecords r = current();
    return r == null ? Double.NaN : r.uncertain();
  }

  private double oldestAgeSeconds() {
    InProgressRecords r = current();
    if (r == null) {
      return Double.NaN;
    }
    return r.oldestAge(clock.instant()).toNanos() / 1e9;
  }

  /** The last figures; starts a read when they are older than the refresh interval. */
  private InProgressRecords current() {
    long now = nanoTime.getAsLong();
    if ((!attempted || now - lastAttempt >= refreshNanos) && refreshing.compareAndSet(false, true)) {
      attempted = true;
      lastAttempt = now;
      try {
        executor.execute(() -> {
          try {
            read();
          } finally {
            refreshing.set(false);
          }
        });
      } catch (RejectedExecutionException e) {
        refreshing.set(false);
      }
    }
    return last;
  }

  private void read() {
    reads.incrementAndGet();
    try {
      last = Objects.requireNonNull(reader.apply(clock.instant()), "in-progress figures");
      if (failing) {
        failing = false;
        LOG.log(System.Logger.Level.INFO, "Idem '" + instance + "': in-progress records can be counted again");
      }
    } catch (RuntimeException e) {
      if (!failing && !closed) {
        failing = true;
        LOG.log(System.Logger.Level.WARNING, "Idem '" + instance + "': cannot count the in-progress records for"
            + " the " + IN_PROGRESS + " gauges; they keep their last values and are read again in "
            + Duration.ofNanos(refreshNanos) + ": " + e.getMessage());
      }
    }
  }
}
