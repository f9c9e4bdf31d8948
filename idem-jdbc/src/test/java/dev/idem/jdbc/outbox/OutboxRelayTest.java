package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxListener;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStatus;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The relay's life cycle, configuration checks and listener, on H2. */
class OutboxRelayTest {
  HikariDataSource ds;
  JdbcOutboxStore store;
  Outbox outbox;

  @BeforeEach
  void setUp() {
    ds = Databases.pool(JdbcDialect.H2);
    store = JdbcOutboxStore.builder(ds).table(Databases.freshTables(JdbcDialect.H2, "obl_h2", "ibl_h2")).build();
    outbox = Outbox.builder(store).build();
  }

  void enqueue(String destination, int n) throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      outbox.enqueue(JdbcTransaction.of(c), OutboxEvent.builder("t").aggregate("a", "x" + n)
          .payload("{\"n\":" + n + "}").destination(destination).build());
      c.commit();
    }
  }

  @Test
  void closeFinishesTheBatchInHandAndGivesBackWhatItHadNotStarted() throws Exception {
    enqueue("slow:1", 1);
    enqueue("fast:1", 2);
    CountDownLatch inSend = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    RecordingTransport slow = new RecordingTransport().answering(m -> {
      inSend.countDown();
      try {
        proceed.await(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return DeliveryResult.delivered();
    });
    RecordingTransport fast = new RecordingTransport();
    OutboxRelay relay = OutboxRelay.builder(outbox).route("slow", slow).route("fast", fast).build();
    relay.start();
    assertThat(inSend.await(30, TimeUnit.SECONDS)).isTrue();
    Thread closer = new Thread(relay::close);
    closer.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (relay.isRunning()) {
      assertThat(System.nanoTime()).isLessThan(deadline);
      LockSupport.parkNanos(1_000_000);
    }
    proceed.countDown();
    closer.join(30_000);
    assertThat(closer.isAlive()).isFalse();

    assertThat(fast.sent).as("not started after close").isEmpty();
    List<OutboxEntry> all = outbox.list(OutboxQuery.all()).entries();
    assertThat(all).extracting(OutboxEntry::status).containsExactly(OutboxStatus.DELIVERED, OutboxStatus.PENDING);
    OutboxEntry released = all.get(1);
    assertThat(released.leaseOwner()).isNull();
    assertThat(released.attempts()).as("giving back is not an attempt").isZero();
    assertThat(OutboxRelay.builder(outbox).route("fast", fast).build().runOnce()).isEqualTo(1);
  }

  @Test
  void theListenerHearsEveryOutcome() throws Exception {
    enqueue("ok:1", 1);
    enqueue("bad:1", 2);
    enqueue("gone:1", 3);
    AtomicInteger claimed = new AtomicInteger();
    List<String> outcomes = new CopyOnWriteArrayList<>();
    OutboxRelay relay = OutboxRelay.builder(outbox).name("heard")
        .route("ok", new RecordingTransport())
        .route("bad", new RecordingTransport().answering(m -> DeliveryResult.retry("HTTP 500", 500)))
        .route("gone", new RecordingTransport().answering(m -> DeliveryResult.permanent("HTTP 410", 410)))
        .listener(new OutboxListener() {
          @Override
          public void claimed(String relay, int count) {
            claimed.addAndGet(count);
          }

          @Override
          public void delivered(String relay, OutboxMessage message, Duration sinceEnqueue) {
            outcomes.add(relay + " delivered " + message.destination());
            assertThat(sinceEnqueue.isNegative()).isFalse();
          }

          @Override
          public void failed(String relay, OutboxMessage message, DeliveryResult result, boolean dead) {
            outcomes.add(relay + (dead ? " dead " : " failed ") + message.destination());
            throw new IllegalStateException("a listener that throws changes nothing");
          }
        }).build();
    assertThat(relay.runOnce()).isEqualTo(3);
    assertThat(claimed).hasValue(3);
    assertThat(outcomes).containsExactlyInAnyOrder("heard delivered ok:1", "heard failed bad:1", "heard dead gone:1");
  }

  @Test
  void aRelayStartsOnceAndNeedsARoute() {
    OutboxRelay relay = OutboxRelay.builder(outbox).route("x", new RecordingTransport()).build();
    relay.start();
    try {
      assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class);
    } finally {
      relay.close();
    }
    assertThatThrownBy(() -> OutboxRelay.builder(outbox).build()).hasMessageContaining("at least one route");
  }

  @Test
  void badSettingsAreRefusedUpFront() {
    OutboxRelay.Builder b = OutboxRelay.builder(outbox);
    RecordingTransport t = new RecordingTransport();
    assertThatThrownBy(() -> b.route("a:b", t)).hasMessageContaining("before ':'");
    assertThatThrownBy(() -> b.route("x", t, 0)).hasMessageContaining("maxAttempts");
    assertThatThrownBy(() -> b.batchSize(0)).hasMessageContaining("batchSize");
    assertThatThrownBy(() -> b.threads(65)).hasMessageContaining("threads");
    assertThatThrownBy(() -> b.lease(Duration.ofMillis(10))).hasMessageContaining("lease");
    assertThatThrownBy(() -> b.pollInterval(Duration.ZERO)).hasMessageContaining("pollInterval");
    b.route("x", t);
    assertThatThrownBy(() -> b.route("x", t)).hasMessageContaining("already");
    assertThatThrownBy(() -> JdbcOutboxStore.builder(ds).table("bad-name")).hasMessageContaining("SQL identifier");
    assertThatThrownBy(() -> Outbox.builder(store).maxPayloadBytes(0)).hasMessageContaining("maxPayloadBytes");
  }
}
