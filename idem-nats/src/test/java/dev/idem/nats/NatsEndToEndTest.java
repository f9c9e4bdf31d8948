package dev.idem.nats;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Outbox on PostgreSQL -> relay -> NATS JetStream -> inbox consumer -> effect table, on the real servers. */
class NatsEndToEndTest {
  private static final int EVENTS = 500;

  private NatsFixture f;

  @BeforeEach
  void setUp() throws Exception {
    f = new NatsFixture();
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  @Test
  void everyCommittedEventHasExactlyOneEffectAndIsMarkedDelivered() throws Exception {
    Outbox outbox = f.outbox();
    NatsFixture.Counts counts = new NatsFixture.Counts();
    Inbox inbox = f.inbox(counts);
    List<String> ids = new ArrayList<>();
    try (Connection c = TestPostgres.postgres().getConnection()) {
      c.setAutoCommit(false);
      for (int tx = 0; tx < 10; tx++) {
        for (int i = 0; i < EVENTS / 10; i++) {
          int n = tx * (EVENTS / 10) + i;
          ids.add(outbox.enqueue(JdbcTransaction.of(c), OutboxEvent.builder("order.placed").aggregate("order", "o-" + n)
              .payload("{\"n\":" + n + "}").header("tenant", "t-1").destination("nats:" + f.subject).build())
              .toString());
        }
        c.commit();
      }
    }

    NatsJetStreamTransport transport = NatsJetStreamTransport.builder(f.nats).name("e2e").build();
    try (NatsInboxConsumer consumer = NatsInboxConsumer.builder(f.nats, inbox, "e2e", f.stream, f.subject)
            .handler(f.recordEffect()).batchSize(50).listener(counts).build().start();
        OutboxRelay relay = OutboxRelay.builder(outbox).name("nats-e2e").route("nats", transport).threads(2)
            .batchSize(50).pollInterval(Duration.ofMillis(20)).build()) {
      relay.start();
      Eventually.await("an effect for every event", Duration.ofSeconds(90), f::effectCount, n -> n >= EVENTS);
      Eventually.await("every event marked delivered", Duration.ofSeconds(30),
          () -> outbox.stats().count(OutboxStatus.DELIVERED), n -> n == EVENTS);
      Eventually.await("every message acknowledged", Duration.ofSeconds(30), counts.acknowledged::get,
          n -> n >= EVENTS);
    }

    assertThat(f.effectCount()).isEqualTo(EVENTS);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    OutboxStats stats = outbox.stats();
    assertThat(stats.count(OutboxStatus.DELIVERED)).isEqualTo(EVENTS);
    assertThat(stats.count(OutboxStatus.PENDING)).isZero();
    assertThat(stats.count(OutboxStatus.DEAD)).isZero();
    assertThat(counts.processed.get()).isEqualTo(EVENTS);
    assertThat(f.storedMessages()).isEqualTo(EVENTS);
    assertThat(f.jsm.getConsumerInfo(f.stream, "e2e").getNumAckPending()).isZero();
  }
}
