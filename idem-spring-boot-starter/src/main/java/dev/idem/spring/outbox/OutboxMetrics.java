package dev.idem.spring.outbox;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.InboxListener;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import dev.idem.spring.internal.GaugeReadThread;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The outbox's and the inbox's meters, as an {@link OutboxListener} (give it to a relay) and an {@link InboxListener}
 * (give it to an inbox). The auto-configured relay and inbox get it; an application that builds its own
 * {@code Inbox} or {@code OutboxRelay} passes this bean to their builders' {@code listener(...)}.
 *
 * <p>Every meter is tagged {@code instance} (the Idem instance, {@code idem.name}) besides the tags below.
 *
 * <ul>
 *   <li>{@code idem.outbox.delivered} (counter): relay, route
 *   <li>{@code idem.outbox.delivery.latency} (timer, with a histogram): from enqueue to delivery; relay, route
 *   <li>{@code idem.outbox.failed} (counter): relay, route, dead = true|false, kind = retry|permanent
 *   <li>{@code idem.outbox.decryption.failures} (counter): sealed payloads that did not open (the event is dead,
 *       never sent); relay, route, reason = tampered|unknown_key|malformed
 *   <li>{@code idem.outbox.lease.lost} (counter, rows) and {@code idem.outbox.relay.errors} (counter): relay
 *   <li>{@code idem.outbox.backlog} (gauge): pending events; {@code idem.outbox.dead} (gauge): dead events
 *   <li>{@code idem.outbox.oldest.pending.age} (time gauge): how long the oldest pending event has waited, 0 when
 *       none
 *   <li>{@code idem.inbox.processed}, {@code idem.inbox.duplicates}, {@code idem.inbox.payload.mismatch}
 *       (counters): consumer
 * </ul>
 *
 * <p>Tags are names an application chooses (relays, routes, consumers), never event ids, keys or destinations' details,
 * whose cardinality is unbounded. The gauges read {@link Outbox#stats()} at most once per refresh interval whatever
 * the scrape rate, never on the scraping thread: a scrape that finds the figures older than the interval starts a
 * read on this object's own daemon thread ({@code idem-outbox-metrics-<instance>}) and answers with the last figures
 * (the oldest pending age keeps growing with the clock), so a scrape never waits for the database and a slow read
 * holds up no other outbox's gauges. Until the first successful read they are NaN. {@link #close()} stops the thread
 * and removes the gauges; the auto-configured bean is closed with the application context, and an application that
 * builds its own closes it. Thread-safe.
 */
public final class OutboxMetrics implements OutboxListener, InboxListener, AutoCloseable {
  private static final System.Logger LOG = System.getLogger(OutboxMetrics.class.getName());

  private final ExecutorService refresher;
  private final List<Meter> gauges;
  private final MeterRegistry registry;
  private final String instance;
  private final Supplier<Outbox> outbox;
  private final long refreshNanos;
  private final AtomicBoolean refreshing = new AtomicBoolean();
  private volatile Snapshot snapshot;
  private volatile boolean attempted;
  private volatile long lastAttempt;
  private volatile boolean failing;
  private volatile boolean closed;

  private record Snapshot(OutboxStats stats, long takenAt) {}

  /**
   * Meters on {@code registry}, tagged {@code instance=idem}.
   *
   * @param outbox the outbox whose backlog the gauges show, resolved on the first read; it may return null (no
   *     gauges values, NaN)
   * @param statsRefresh the shortest time between two reads of the outbox's statistics
   */
  public OutboxMetrics(MeterRegistry registry, Supplier<Outbox> outbox, Duration statsRefresh) {
    this(registry, "idem", outbox, statsRefresh);
  }

  /**
   * Meters on {@code registry}.
   *
   * @param instance the {@code instance} tag of every meter: the Idem instance's name ({@code idem.name})
   * @param outbox the outbox whose backlog the gauges show, resolved on the first read; it may return null (no
   *     gauges values, NaN)
   * @param statsRefresh the shortest time between two reads of the outbox's statistics
   */
  public OutboxMetrics(MeterRegistry registry, String instance, Supplier<Outbox> outbox, Duration statsRefresh) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.instance = Objects.requireNonNull(instance, "instance");
    this.outbox = Objects.requireNonNull(outbox, "outbox");
    if (statsRefresh.isNegative() || statsRefresh.isZero()) {
      throw new IllegalArgumentException("statsRefresh must be positive, got " + statsRefresh);
    }
    this.refreshNanos = statsRefresh.toNanos();
    this.refresher = GaugeReadThread.executor("idem-outbox-metrics-" + instance);
    gauges = List.of(
        Gauge.builder("idem.outbox.backlog", this, m -> m.count(OutboxStatus.PENDING))
            .description("Outbox events waiting to be delivered").tag("instance", instance).strongReference(true)
            .register(registry),
        Gauge.builder("idem.outbox.dead", this, m -> m.count(OutboxStatus.DEAD))
            .description("Outbox events that ran out of attempts, waiting for an operator").tag("instance", instance)
            .strongReference(true).register(registry),
        TimeGauge.builder("idem.outbox.oldest.pending.age", this, TimeUnit.SECONDS,
                OutboxMetrics::oldestPendingSeconds)
            .description("How long the oldest pending outbox event has waited").tag("instance", instance)
            .strongReference(true).register(registry));
  }

  /**
   * Removes the gauges from the registry and stops the thread that reads the outbox's statistics (interrupting a
   * read in progress) without waiting for it; the counters stay. Idempotent.
   */
  @Override
  public void close() {
    closed = true;
    gauges.forEach(registry::remove);
    refresher.shutdownNow();
  }

  // ------------------------------------------------------------------------------------------------ relay

  @Override
  public void delivered(String relay, OutboxMessage message, Duration sinceEnqueue) {
    String route = route(message);
    Counter.builder("idem.outbox.delivered").description("Outbox events delivered")
        .tags("instance", instance, "relay", relay, "route", route).register(registry).increment();
    Timer.builder("idem.outbox.delivery.latency").description("Time from enqueue to delivery")
        .publishPercentileHistogram().tags("instance", instance, "relay", relay, "route", route).register(registry)
        .record(Math.max(0, sinceEnqueue.toNanos()), TimeUnit.NANOSECONDS);
  }

  @Override
  public void failed(String relay, OutboxMessage message, DeliveryResult result, boolean dead) {
    Counter.builder("idem.outbox.failed").description("Failed delivery attempts; dead=true when it was the last")
        .tags("instance", instance, "relay", relay, "route", route(message), "dead", Boolean.toString(dead),
            "kind", result.kind().name().toLowerCase(Locale.ROOT))
        .register(registry).increment();
  }

  @Override
  public void decryptionFailed(String relay, OutboxMessage message, DecryptionException error) {
    Counter.builder("idem.outbox.decryption.failures").description("Sealed payloads that did not open; never sent")
        .tags("instance", instance, "relay", relay, "route", route(message),
            "reason", error.reason().name().toLowerCase(Locale.ROOT))
        .register(registry).increment();
  }

  @Override
  public void leaseLost(String relay, int rows) {
    Counter.builder("idem.outbox.lease.lost").description("Rows whose lease ran out before the relay marked them")
        .tags("instance", instance, "relay", relay).register(registry).increment(rows);
  }

  @Override
  public void relayError(String relay, Throwable error) {
    Counter.builder("idem.outbox.relay.errors").description("Relay cycles that failed (database or transport)")
        .tags("instance", instance, "relay", relay).register(registry).increment();
  }

  // ------------------------------------------------------------------------------------------------ inbox

  @Override
  public void processed(String consumer) {
    Counter.builder("idem.inbox.processed").description("Events an inbox consumer processed")
        .tags("instance", instance, "consumer", consumer).register(registry).increment();
  }

  @Override
  public void duplicate(String consumer) {
    Counter.builder("idem.inbox.duplicates").description("Redelivered events an inbox consumer skipped")
        .tags("instance", instance, "consumer", consumer).register(registry).increment();
  }

  @Override
  public void payloadMismatch(String consumer, String eventId) {
    Counter.builder("idem.inbox.payload.mismatch").description("Event ids that came again with another payload")
        .tags("instance", instance, "consumer", consumer).register(registry).increment();
  }

  // ------------------------------------------------------------------------------------------------ gauges

  private static String route(OutboxMessage message) {
    String destination = message.destination();
    int colon = destination.indexOf(':');
    return colon < 0 ? destination : destination.substring(0, colon);
  }

  private double count(OutboxStatus status) {
    Snapshot s = current();
    return s == null ? Double.NaN : s.stats().count(status);
  }

  private double oldestPendingSeconds() {
    Snapshot s = current();
    if (s == null) {
      return Double.NaN;
    }
    return s.stats().oldestPendingAge()
        .map(age -> (age.toNanos() + Math.max(0, System.nanoTime() - s.takenAt())) / 1e9)
        .orElse(0.0);
  }

  /**
   * The last statistics. When they are older than the refresh interval, a read is started on a background thread and
   * this answer still uses the last ones: a scrape never waits for the database, even when it is away.
   */
  private Snapshot current() {
    long now = System.nanoTime();
    if ((!attempted || now - lastAttempt >= refreshNanos) && refreshing.compareAndSet(false, true)) {
      attempted = true;
      lastAttempt = now;
      try {
        refresher.execute(() -> {
          try {
            read();
          } finally {
            refreshing.set(false);
          }
        });
      } catch (RuntimeException e) {
        refreshing.set(false);
      }
    }
    Snapshot s = snapshot;
    return s == null || s.stats() == null ? null : s;
  }

  private void read() {
    try {
      Outbox o = outbox.get();
      // pending and dead only: the delivered rows kept for the retention period are not worth a count per refresh
      OutboxStats stats = o == null ? null : o.stats(EnumSet.of(OutboxStatus.PENDING, OutboxStatus.DEAD));
      snapshot = new Snapshot(stats, System.nanoTime());
      if (failing) {
        failing = false;
        LOG.log(System.Logger.Level.INFO, "outbox statistics can be read again");
      }
    } catch (RuntimeException e) {
      // keep the last figures, and do not ask again before the interval is over
      if (!failing && !closed) {
        failing = true;
        LOG.log(System.Logger.Level.WARNING, "cannot read the outbox statistics for the backlog gauges; they keep"
            + " their last values and are read again in " + Duration.ofNanos(refreshNanos) + ": " + e.getMessage());
      }
    }
  }
}
