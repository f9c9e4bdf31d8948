package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import dev.idem.test.ChildJvm;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import dev.idem.test.kafka.KafkaBroker;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Outbox on PostgreSQL -> relay -> Kafka -> inbox consumer -> effect table, on the real servers. */
class KafkaEndToEndTest {
  private static final Duration WAIT = Duration.ofSeconds(120);

  private KafkaFixture f;

  @BeforeEach
  void setUp() {
    f = new KafkaFixture(3);
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  private List<String> enqueue(Outbox outbox, int events) throws Exception {
    List<String> ids = new ArrayList<>();
    try (Connection c = TestPostgres.postgres().getConnection()) {
      c.setAutoCommit(false);
      for (int n = 0; n < events; n++) {
        ids.add(outbox.enqueue(JdbcTransaction.of(c), OutboxEvent.builder("order.placed")
            .aggregate("order", "o-" + (n % 40))
            .payload("{\"n\":" + n + "}").header("tenant", "t-1").destination("kafka").build()).toString());
        if (n % 100 == 99) {
          c.commit();
        }
      }
      c.commit();
    }
    return ids;
  }

  @Test
  void everyCommittedEventHasExactlyOneEffectAndIsMarkedDelivered() throws Exception {
    Outbox outbox = f.outbox();
    List<String> ids = enqueue(outbox, 1000);
    KafkaFixture.Counts counts = new KafkaFixture.Counts();
    Inbox inbox = f.inbox(counts);

    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig()).topic("order.placed", f.topic)
            .build();
        KafkaInboxConsumer consumer = f.consumer(inbox).listener(counts).build().start();
        OutboxRelay relay = OutboxRelay.builder(outbox).name("kafka-e2e").route("kafka", transport).threads(2)
            .batchSize(100).pollInterval(Duration.ofMillis(20)).build()) {
      relay.start();
      Eventually.await("every event marked delivered", WAIT, () -> outbox.stats().count(OutboxStatus.DELIVERED),
          n -> n == 1000);
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 1000);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    OutboxStats stats = outbox.stats();
    assertThat(stats.count(OutboxStatus.PENDING)).isZero();
    assertThat(stats.count(OutboxStatus.DEAD)).isZero();
    assertThat(counts.processed.get()).isEqualTo(1000);
    assertThat(counts.duplicates.get()).isZero();
  }

  @Test
  void aRelayKilledAfterSendingAndBeforeMarkingSendsAgainAndTheInboxAbsorbsTheCopies() throws Exception {
    Outbox outbox = f.outbox();
    List<String> ids = enqueue(outbox, 300);
    int sentBeforeKill;
    try (ChildJvm child = ChildJvm.start(RelayCrashChild.class, List.of(KafkaBroker.bootstrapServers(),
        TestPostgres.url(), TestPostgres.user(), f.outboxTable, "50", f.topic))) {
      child.awaitLine("READY", ChildJvm.READY_TIMEOUT);
      String sent = child.awaitLine("SENT", ChildJvm.READY_TIMEOUT);
      sentBeforeKill = Integer.parseInt(sent.substring("SENT ".length()));
      child.kill();
    }
    assertThat(sentBeforeKill).isEqualTo(50);
    assertThat(f.endOffsets()).as("the killed relay's batch reached Kafka").isEqualTo(50);
    assertThat(outbox.stats().count(OutboxStatus.DELIVERED)).as("and none of it was marked").isZero();
    KafkaFixture.Counts counts = new KafkaFixture.Counts();
    Inbox inbox = f.inbox(counts);

    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig()).topic("order.placed", f.topic)
            .build();
        KafkaInboxConsumer consumer = f.consumer(inbox).listener(counts).build().start();
        OutboxRelay relay = OutboxRelay.builder(outbox).name("survivor").route("kafka", transport).batchSize(50)
            .pollInterval(Duration.ofMillis(20)).build()) {
      relay.start();
      Eventually.await("every event marked delivered", WAIT, () -> outbox.stats().count(OutboxStatus.DELIVERED),
          n -> n == 300);
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 350);
    }

    assertThat(f.endOffsets()).as("the killed batch is in Kafka twice").isEqualTo(350);
    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    assertThat(counts.duplicates.get()).as("the inbox absorbed every copy").isEqualTo(50);
  }

  private long committed() {
    try {
      return f.committedOffsets();
    } catch (Exception e) {
      return -1;
    }
  }
}
