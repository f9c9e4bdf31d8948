package dev.idem.jdbc.outbox.relay;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.jdbc.outbox.Databases;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStatus;
import dev.idem.outbox.OutboxTransport;
import dev.idem.test.Eventually;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Four relays on one outbox of 10,000 events: every event arrives, no event is in flight in two relays at once, and
 * duplicates happen only after an injected relay crash, bounded by the crashed relay's batch.
 */
abstract class ConcurrentRelaysContract {
  static final int EVENTS = 10_000;
  static final int BATCH = 100;

  abstract JdbcDialect dialect();

  HikariDataSource ds;
  Outbox outbox;
  final Set<UUID> enqueued = new HashSet<>();

  /** Counts arrivals per event and catches any event handed to two transports at the same time. */
  static final class Sink {
    final Map<UUID, AtomicInteger> arrivals = new ConcurrentHashMap<>();
    final Set<UUID> inFlight = ConcurrentHashMap.newKeySet();
    final AtomicInteger overlaps = new AtomicInteger();

    void begin(List<OutboxMessage> batch) {
      for (OutboxMessage m : batch) {
        if (!inFlight.add(m.id())) {
          overlaps.incrementAndGet();
        }
      }
    }

    void arrive(OutboxMessage m) {
      arrivals.computeIfAbsent(m.id(), k -> new AtomicInteger()).incrementAndGet();
    }

    void end(List<OutboxMessage> batch) {
      for (OutboxMessage m : batch) {
        inFlight.remove(m.id());
      }
    }

    int duplicates() {
      int d = 0;
      for (AtomicInteger n : arrivals.values()) {
        d += n.get() - 1;
      }
      return d;
    }
  }

  /** A transport delivering to the sink. */
  static class SinkTransport implements OutboxTransport {
    final Sink sink;

    SinkTransport(Sink sink) {
      this.sink = sink;
    }

    @Override
    public DeliveryResult send(OutboxMessage message) {
      throw new UnsupportedOperationException("batches only");
    }

    @Override
    public List<DeliveryResult> sendAll(List<OutboxMessage> batch) {
      sink.begin(batch);
      List<DeliveryResult> out = new ArrayList<>(batch.size());
      for (OutboxMessage m : batch) {
        sink.arrive(m);
        out.add(DeliveryResult.delivered());
      }
      beforeMarking(batch);
      sink.end(batch);
      return out;
    }

    void beforeMarking(List<OutboxMessage> batch) {}
  }

  /**
   * Thrown by a transport to kill its relay thread after sending and before marking: a crash, as far as the rows
   * know.
   */
  static final class RelayCrash extends Error {
    RelayCrash() {
      super("injected relay crash after sending", null, false, false);
    }
  }

  @BeforeEach
  void fill() throws Exception {
    ds = Databases.pool(dialect());
    String table = Databases.freshTables(dialect(), "obr_" + dialect().name().toLowerCase().substring(0, 2),
        "ibr_" + dialect().name().toLowerCase().substring(0, 2));
    outbox = Outbox.builder(JdbcOutboxStore.builder(ds).table(table).build()).build();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      for (int from = 0; from < EVENTS; from += 1000) {
        List<OutboxEvent> chunk = new ArrayList<>();
        for (int i = from; i < from + 1000; i++) {
          chunk.add(OutboxEvent.builder("payment.succeeded").aggregate("payment", "p" + i)
              .payload("{\"n\":" + i + "}").destination("sink").build());
        }
        enqueued.addAll(outbox.enqueueAll(JdbcTransaction.of(c), chunk));
        c.commit();
      }
    }
  }

  private void drain(List<OutboxRelay> relays, Duration deadline) {
    relays.forEach(OutboxRelay::start);
    try {
      Eventually.await("all events delivered", deadline, outbox::stats,
          stats -> stats.count(OutboxStatus.DELIVERED) == EVENTS);
    } finally {
      relays.forEach(OutboxRelay::close);
    }
  }

  OutboxRelay relay(String name, OutboxTransport transport, Duration lease) {
    return OutboxRelay.builder(outbox).name(name).route("sink", transport).batchSize(BATCH).lease(lease)
        .pollInterval(Duration.ofMillis(5)).build();
  }

  @Test
  void fourRelaysDeliverEveryEventWithoutOverlapOrDuplicates() {
    Sink sink = new Sink();
    List<OutboxRelay> relays = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      relays.add(relay("r" + i, new SinkTransport(sink), Duration.ofSeconds(60)));
    }
    drain(relays, Duration.ofMinutes(3));
    assertThat(sink.arrivals.keySet()).isEqualTo(enqueued);
    assertThat(sink.overlaps).as("events in flight in two relays at once").hasValue(0);
    assertThat(sink.duplicates()).as("no crash, no duplicate").isZero();
    assertThat(outbox.stats().count(OutboxStatus.PENDING)).isZero();
  }

  @Test
  void aCrashedRelaysBatchIsTakenOverAndOnlyItIsDuplicated() {
    Sink sink = new Sink();
    Set<UUID> crashedBatch = ConcurrentHashMap.newKeySet();
    AtomicBoolean crashed = new AtomicBoolean();
    AtomicInteger batches = new AtomicInteger();
    SinkTransport crashing = new SinkTransport(sink) {
      @Override
      void beforeMarking(List<OutboxMessage> batch) {
        if (batches.incrementAndGet() == 3 && crashed.compareAndSet(false, true)) {
          batch.forEach(m -> crashedBatch.add(m.id()));
          sink.end(batch);
          throw new RelayCrash(); // the worker thread dies; its rows stay leased until the lease ends
        }
      }
    };
    List<OutboxRelay> relays = new ArrayList<>();
    // long enough that a batch it sends normally outlives no lease on a loaded machine (a takeover of such a batch
    // would duplicate it too), short enough that the crashed batch is taken over within the drain
    relays.add(relay("crashy", crashing, Duration.ofSeconds(8)));
    for (int i = 0; i < 3; i++) {
      relays.add(relay("r" + i, new SinkTransport(sink), Duration.ofSeconds(60)));
    }
    Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((t, e) -> {
      if (!(e instanceof RelayCrash) && previous != null) {
        previous.uncaughtException(t, e);
      }
    });
    try {
      drain(relays, Duration.ofMinutes(3));
    } finally {
      Thread.setDefaultUncaughtExceptionHandler(previous);
    }
    assertThat(crashed).as("the crash was injected").isTrue();
    assertThat(sink.arrivals.keySet()).isEqualTo(enqueued);
    assertThat(sink.overlaps).hasValue(0);
    Set<UUID> duplicated = new HashSet<>();
    sink.arrivals.forEach((id, n) -> {
      if (n.get() > 1) {
        duplicated.add(id);
      }
    });
    assertThat(duplicated).as("only the crashed batch is sent twice").isNotEmpty().isSubsetOf(crashedBatch);
    assertThat(sink.duplicates()).isLessThanOrEqualTo(BATCH);
    assertThat(sink.arrivals.values()).allSatisfy(n -> assertThat(n.get()).isLessThanOrEqualTo(2));
  }
}
