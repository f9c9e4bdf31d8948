package dev.idem.rabbitmq;

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

/** Outbox on PostgreSQL -> relay -> RabbitMQ -> inbox consumer -> effect table, on the real servers. */
class RabbitMqEndToEndTest {
  private static final int EVENTS = 500;

  private RabbitFixture f;

  @BeforeEach
  void setUp() throws Exception {
    f = new RabbitFixture();
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  @Test
  void everyCommittedEventHasExactlyOneEffectAndIsMarkedDelivered() throws Exception {
    Outbox outbox = f.outbox();
    RabbitFixture.Counts counts = new RabbitFixture.Counts();
    Inbox inbox = f.inbox(counts);
    List<String> ids = new ArrayList<>();
    try (Connection c = TestPostgres.postgres().getConnection()) {
      c.setAutoCommit(false);
      for (int tx = 0; tx < 10; tx++) {
        for (int i = 0; i < EVENTS / 10; i++) {
          int n = tx * (EVENTS / 10) + i;
          // half through the exchange, half straight to the queue through the default exchange
          String destination = n % 2 == 0 ? f.toExchange() : "rabbitmq:/" + f.queue;
          ids.add(outbox.enqueue(JdbcTransaction.of(c), OutboxEvent.builder("order.placed").aggregate("order", "o-" + n)
              .payload("{\"n\":" + n + "}").header("tenant", "t-1").destination(destination).build()).toString());
        }
        c.commit();
      }
    }

    try (RabbitMqTransport transport = RabbitMqTransport.builder(Rabbit.factory()).name("e2e").build();
        RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "e2e", f.queue)
            .handler(f.recordEffect()).channels(2).prefetch(50).listener(counts).build().start();
        OutboxRelay relay = OutboxRelay.builder(outbox).name("rmq-e2e").route("rabbitmq", transport).threads(2)
            .batchSize(50).pollInterval(Duration.ofMillis(20)).build()) {
      relay.start();
      Eventually.await("an effect for every event", Duration.ofSeconds(90), f::effectCount, n -> n >= EVENTS);
      Eventually.await("every event marked delivered", Duration.ofSeconds(30),
          () -> outbox.stats().count(OutboxStatus.DELIVERED), n -> n == EVENTS);
    }

    assertThat(f.effectCount()).isEqualTo(EVENTS);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    OutboxStats stats = outbox.stats();
    assertThat(stats.count(OutboxStatus.DELIVERED)).isEqualTo(EVENTS);
    assertThat(stats.count(OutboxStatus.PENDING)).isZero();
    assertThat(stats.count(OutboxStatus.DEAD)).isZero();
    assertThat(counts.processed.get()).isEqualTo(EVENTS);
    assertThat(f.ready(f.queue)).isZero();
  }
}
