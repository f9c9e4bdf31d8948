package dev.idem.nats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.OutboxMessage;
import dev.idem.test.DatabaseOutage;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.impl.Headers;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The inbox consumer on the real NATS JetStream and PostgreSQL: one effect per message id, acked after commit. */
class NatsInboxConsumerTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  private NatsFixture f;
  private NatsFixture.Counts counts;
  private Inbox inbox;
  private NatsJetStreamTransport transport;

  @BeforeEach
  void setUp() throws Exception {
    f = new NatsFixture();
    counts = new NatsFixture.Counts();
    inbox = f.inbox(counts);
    transport = NatsJetStreamTransport.builder(f.nats).name("consumer-test").build();
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  private NatsInboxConsumer.Builder consumer(InboxHandler handler) {
    return NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject).handler(handler).listener(counts)
        .fetchWait(Duration.ofMillis(100));
  }

  private void publish(OutboxMessage m) {
    assertThat(transport.sendAll(List.of(m))).extracting(DeliveryResult::isDelivered).containsExactly(true);
  }

  private long ackPending(String durable) throws Exception {
    return f.jsm.getConsumerInfo(f.stream, durable).getNumAckPending();
  }

  @Test
  void aMessageRedeliveredAfterItsAckWaitEndedHasOneEffect() throws Exception {
    // a first consumer instance processes and commits the message, then dies before acknowledging it
    OutboxMessage m = f.message();
    publish(m);
    f.jsm.addOrUpdateConsumer(f.stream, ConsumerConfiguration.builder().durable("billing").filterSubject(f.subject)
        .ackPolicy(AckPolicy.Explicit).ackWait(Duration.ofSeconds(1)).build());
    JetStreamSubscription crashed = f.js.subscribe(f.subject, PullSubscribeOptions.bind(f.stream, "billing"));
    List<Message> fetched = crashed.fetch(1, Duration.ofSeconds(5));
    assertThat(fetched).hasSize(1);
    Message first = fetched.get(0);
    InboxEvent event = new InboxEvent(first.getHeaders().getFirst("Nats-Msg-Id"), "nats:" + f.subject,
        first.getData(), first);
    inbox.processBatchAndCommit("billing", List.of(event), f.recordEffect());
    crashed.unsubscribe(); // no ack: JetStream delivers it again once the ack wait ends

    try (NatsInboxConsumer consumer = consumer(f.recordEffect()).ackWait(Duration.ofSeconds(1)).build().start()) {
      Eventually.await("the redelivery acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      Eventually.await("nothing left unacknowledged", WAIT, () -> {
        try {
          return ackPending("billing");
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, n -> n == 0);
    }

    assertThat(counts.duplicates.get()).isEqualTo(1);
    assertThat(counts.acknowledgedDuplicates.get()).isEqualTo(1);
    assertThat(counts.processed.get()).isEqualTo(1);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
  }

  @Test
  void inTheFirstDeliveryOrderAFirstDeliveryRunsTheHandlerFirstAndARedeliveryRecordsFirst() throws Exception {
    OutboxMessage failing = f.message();
    OutboxMessage next = f.message();
    List<Boolean> recordedFirst = new CopyOnWriteArrayList<>();
    InboxHandler handler = (tx, event) -> {
      recordedFirst.add(TestPostgres.inboxRecorded(tx.unwrap(Connection.class), f.inboxTable, "billing",
          event.eventId()));
      if (recordedFirst.size() <= 2) {
        throw new IllegalStateException("injected failure");
      }
      return f.recordEffect().handle(tx, event);
    };

    try (NatsInboxConsumer consumer = consumer(handler).firstDeliveryOrder(true).build().start()) {
      publish(failing);
      Eventually.await("the failing message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      publish(next);
      Eventually.await("the next message acknowledged", WAIT, counts.acknowledged::get, n -> n == 2);
    }

    assertThat(recordedFirst).as("the first delivery's try in each order, the redelivery, the next message")
        .containsExactly(false, true, true, false);
    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(counts.processed.get()).isEqualTo(2);
    assertThat(f.effectCount(failing.id().toString())).isEqualTo(1);
    assertThat(f.effectCount(next.id().toString())).isEqualTo(1);
  }

  @Test
  void aFailingHandlerNaksTheMessageWhichIsThenProcessedOnce() throws Exception {
    OutboxMessage m = f.message();
    AtomicInteger calls = new AtomicInteger();
    AtomicLong lastDeliveryCount = new AtomicLong();
    InboxHandler failsOnce = (tx, event) -> {
      Message msg = event.message(Message.class);
      if (calls.incrementAndGet() == 1) {
        throw new IllegalStateException("injected failure");
      }
      lastDeliveryCount.set(msg.metaData().deliveredCount());
      return f.recordEffect().handle(tx, event);
    };

    try (NatsInboxConsumer consumer = consumer(failsOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    assertThat(calls.get()).isEqualTo(2);
    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(lastDeliveryCount.get()).isEqualTo(2);
    assertThat(f.effectCount()).isEqualTo(1);
    assertThat(inbox.contains("billing", m.id().toString())).isTrue();
  }

  @Test
  void aHandlerThatOverflowsItsStackFailsItsMessageAndTheConsumerGoesOn() throws Exception {
    OutboxMessage m = f.message();
    AtomicInteger calls = new AtomicInteger();
    InboxHandler overflowsOnce = (tx, event) -> {
      if (calls.incrementAndGet() == 1) {
        throw new StackOverflowError("injected");
      }
      return f.recordEffect().handle(tx, event);
    };

    try (NatsInboxConsumer consumer = consumer(overflowsOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(calls.get()).isEqualTo(2);
    assertThat(counts.failed.get()).as("counted against the message").isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
  }

  @Test
  void aMessageWhoseTransactionFailsToCommitIsNotAcknowledgedButRedelivered() throws Exception {
    // a deferred constraint fails at COMMIT, after the handler has returned
    String gate = f.table("nats_gate", "(k INT, CONSTRAINT nats_gate_u_" + f.suffix
        + " UNIQUE (k) DEFERRABLE INITIALLY DEFERRED)");
    OutboxMessage m = f.message();
    AtomicInteger calls = new AtomicInteger();
    InboxHandler commitFailsOnce = (tx, event) -> {
      String result = f.recordEffect().handle(tx, event);
      if (calls.incrementAndGet() == 1) {
        Connection c = tx.unwrap(Connection.class);
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + gate + " (k) VALUES (1), (1)")) {
          ps.executeUpdate();
        }
      }
      return result;
    };

    try (NatsInboxConsumer consumer = consumer(commitFailsOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    assertThat(calls.get()).isEqualTo(2);
    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
  }

  @Test
  void aTriggerThatRaisesAtTheCommitCountsAgainstTheMessageAndIsNotHeldAsAnOutage() throws Exception {
    // a deferred constraint trigger raises at COMMIT (SQLState P0001), as the handler's writes are checked: the
    // message's failure, counted and tried again, not a database outage that holds it without counting
    String guarded = f.table("nats_guarded", "(k INT)");
    String refuse = "nats_refuse_" + f.suffix;
    TestPostgres.execute("CREATE FUNCTION " + refuse + "() RETURNS trigger LANGUAGE plpgsql AS"
        + " $$ BEGIN RAISE EXCEPTION 'refused by a trigger'; END $$");
    try {
      TestPostgres.execute("CREATE CONSTRAINT TRIGGER " + guarded + "_t AFTER INSERT ON " + guarded
          + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION " + refuse + "()");
      OutboxMessage m = f.message();
      AtomicInteger calls = new AtomicInteger();
      InboxHandler refusedOnce = (tx, event) -> {
        String result = f.recordEffect().handle(tx, event);
        if (calls.incrementAndGet() == 1) {
          try (PreparedStatement ps = tx.unwrap(Connection.class)
              .prepareStatement("INSERT INTO " + guarded + " (k) VALUES (1)")) {
            ps.executeUpdate();
          }
        }
        return result;
      };

      try (NatsInboxConsumer consumer = consumer(refusedOnce).build().start()) {
        publish(m);
        Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      }

      assertThat(calls.get()).isEqualTo(2);
      assertThat(counts.failed.get()).as("counted against the message").isEqualTo(1);
      assertThat(counts.paused.get()).as("not an outage").isZero();
      assertThat(f.effectCount()).isEqualTo(1);
    } finally {
      TestPostgres.execute("DROP TABLE IF EXISTS " + guarded);
      TestPostgres.execute("DROP FUNCTION IF EXISTS " + refuse + "()");
    }
  }

  @Test
  void theSameIdWithAnotherPayloadIsTerminatedAndAMessageWithoutIdIsRejected() throws Exception {
    // JetStream itself would drop a second Nats-Msg-Id within its window, so this producer's id is in its own header
    InboxHandler handler = (tx, event) -> {
      Message msg = event.message(Message.class);
      TestPostgres.insertEffect(tx.unwrap(Connection.class), f.effects, msg.getHeaders().getFirst("Legacy-Id"));
      return null;
    };

    try (NatsInboxConsumer consumer = consumer(handler)
        .messageIdFallback(msg -> msg.hasHeaders() ? msg.getHeaders().getFirst("Legacy-Id") : null)
        .build().start()) {
      f.js.publish(f.subject, new Headers().put("Legacy-Id", "L-7"), "{\"v\":1}".getBytes(StandardCharsets.UTF_8));
      f.js.publish(f.subject, new Headers().put("Legacy-Id", "L-7"), "{\"v\":2}".getBytes(StandardCharsets.UTF_8));
      f.js.publish(f.subject, "{}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the original acknowledged, the altered copy and the anonymous one terminated", WAIT,
          () -> counts.acknowledged.get() + counts.consumerMismatches.get() + counts.rejected.get(), n -> n == 3);
      Eventually.await("nothing left unacknowledged", WAIT, () -> {
        try {
          return ackPending(consumer.durable());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, n -> n == 0);
    }

    assertThat(counts.acknowledged.get()).isEqualTo(1);
    assertThat(counts.consumerMismatches.get()).isEqualTo(1);
    assertThat(counts.mismatches.get()).isEqualTo(1);
    assertThat(counts.rejected.get()).isEqualTo(1);
    assertThat(f.effectCount("L-7")).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
  }

  @Test
  void aClosedConsumerStopsAndTheNextOneResumesFromTheDurable() throws Exception {
    OutboxMessage before = f.message();
    OutboxMessage after = f.message();
    try (NatsInboxConsumer consumer = consumer(f.recordEffect()).ackWait(Duration.ofSeconds(2)).build().start()) {
      publish(before);
      Eventually.await("the first message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    publish(after);
    ConsumerInfo info = f.jsm.getConsumerInfo(f.stream, "billing");
    assertThat(info.getNumPending() + info.getNumAckPending()).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
    try (NatsInboxConsumer consumer = consumer(f.recordEffect()).ackWait(Duration.ofSeconds(2)).build().start()) {
      Eventually.await("the second message acknowledged", WAIT, counts.acknowledged::get, n -> n == 2);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrder(before.id().toString(), after.id().toString());
  }

  @Test
  void anErrorThrownByTheHandlerNaksTheMessageAndTheConsumerGoesOn() throws Exception {
    OutboxMessage m = f.message();
    OutboxMessage next = f.message();
    AtomicInteger calls = new AtomicInteger();
    InboxHandler errorOnce = (tx, event) -> {
      if (calls.incrementAndGet() == 1) {
        throw new AssertionError("injected Error");
      }
      return f.recordEffect().handle(tx, event);
    };

    try (NatsInboxConsumer consumer = consumer(errorOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      assertThat(consumer.isRunning()).isTrue();
      publish(next);
      Eventually.await("the next message acknowledged", WAIT, counts.acknowledged::get, n -> n == 2);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
    assertThat(f.effectCount(next.id().toString())).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(2);
  }

  @Test
  void aThrowingMessageIdFallbackTerminatesThatMessageAndTheConsumerGoesOn() throws Exception {
    OutboxMessage m = f.message();
    try (NatsInboxConsumer consumer = consumer(f.recordEffect())
        .messageIdFallback(msg -> {
          throw new IllegalStateException("injected fallback failure");
        })
        .build().start()) {
      f.js.publish(f.subject, "{}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the anonymous message rejected", WAIT, counts.rejected::get, n -> n == 1);
      publish(m);
      Eventually.await("the next message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      assertThat(consumer.isRunning()).isTrue();
      Eventually.await("nothing left unacknowledged (the rejected one was terminated)", WAIT, () -> {
        try {
          return ackPending(consumer.durable());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, n -> n == 0);
    }

    assertThat(counts.rejected.get()).isEqualTo(1);
    assertThat(f.effectIds()).containsExactly(m.id().toString());
  }

  @Test
  void failuresAreRedeliveredAfterADelayGrowingWithTheDeliveryCount() throws Exception {
    OutboxMessage m = f.message();
    List<Long> calledAt = new CopyOnWriteArrayList<>();
    InboxHandler failsThrice = (tx, event) -> {
      calledAt.add(System.nanoTime());
      if (calledAt.size() <= 3) {
        throw new IllegalStateException("injected failure " + calledAt.size());
      }
      return f.recordEffect().handle(tx, event);
    };

    try (NatsInboxConsumer consumer = consumer(failsThrice).build().start()) { // default backoff: 100 ms doubling
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    assertThat(calledAt).hasSize(4);
    long first = (calledAt.get(1) - calledAt.get(0)) / 1_000_000;
    long second = (calledAt.get(2) - calledAt.get(1)) / 1_000_000;
    long third = (calledAt.get(3) - calledAt.get(2)) / 1_000_000;
    assertThat(first).as("after the 1st failure").isGreaterThanOrEqualTo(90);
    assertThat(second).as("after the 2nd failure").isGreaterThanOrEqualTo(190);
    assertThat(third).as("after the 3rd failure").isGreaterThanOrEqualTo(390).isGreaterThan(first);
    assertThat(counts.failed.get()).isEqualTo(3);
    assertThat(f.effectCount()).isEqualTo(1);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
  }

  @Test
  void aFailureOnTheLastAllowedDeliveryIsReportedAndTheMessageTerminated() throws Exception {
    OutboxMessage m = f.message();
    InboxHandler alwaysFails = (tx, event) -> {
      throw new IllegalStateException("injected failure");
    };

    try (NatsInboxConsumer consumer = consumer(alwaysFails).maxDeliver(3)
        .nakBackoff(Duration.ofMillis(10), Duration.ofMillis(50)).build().start()) {
      publish(m);
      Eventually.await("the last delivery reported", WAIT, counts.gaveUp::get, n -> n == 1);
      Eventually.await("nothing left unacknowledged", WAIT, () -> {
        try {
          return ackPending(consumer.durable());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, n -> n == 0);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(counts.failed.get()).isEqualTo(2);
    assertThat(counts.gaveUpDeliveries.get()).isEqualTo(3);
    assertThat(f.effectCount()).isZero();
  }

  @Test
  void anAttemptBlockedLongerThanTheAckWaitDuringAnOutageLetsJetStreamDeliverNothingAgain() throws Exception {
    // a pool of one connection, which the test takes: each attempt waits 3 s for a connection, longer than the 2 s
    // ack wait, and fails, as a connection pool does while the database is away
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(TestPostgres.url());
    config.setUsername(TestPostgres.user());
    config.setMaximumPoolSize(1);
    config.setConnectionTimeout(3_000);
    OutboxMessage m = f.message();
    AtomicLong deliveredWhenProcessed = new AtomicLong();
    InboxHandler effect = (tx, event) -> {
      deliveredWhenProcessed.set(event.message(Message.class).metaData().deliveredCount());
      return f.recordEffect().handle(tx, event);
    };

    try (HikariDataSource pool = new HikariDataSource(config)) {
      Inbox unreliable = Inbox.builder(JdbcInboxStore.builder(pool).dialect(JdbcDialect.POSTGRESQL)
          .table(f.inboxTable).build()).listener(counts).build();
      Connection taken = pool.getConnection();
      try (NatsInboxConsumer consumer = NatsInboxConsumer.builder(f.nats, unreliable, "billing", f.stream, f.subject)
          .handler(effect).listener(counts).fetchWait(Duration.ofMillis(100)).ackWait(Duration.ofSeconds(2))
          .maxDeliver(3).build().start()) {
        publish(m);
        Eventually.await("an attempt timed out waiting for a connection", WAIT, counts.paused::get, n -> n >= 1);
        // another puller of the durable consumer gets what JetStream delivers again, within 2.5 ack waits
        JetStreamSubscription other = f.nats.jetStream().subscribe(f.subject,
            PullSubscribeOptions.bind(f.stream, consumer.durable()));
        List<Message> again = other.fetch(1, Duration.ofSeconds(5));
        other.unsubscribe();
        assertThat(again).as("deliveries of the message in hand to another puller").isEmpty();
        assertThat(counts.paused.get()).as("attempts that timed out").isGreaterThanOrEqualTo(2);
        taken.close(); // the database is back
        Eventually.await("the message acknowledged or given up on", WAIT,
            () -> counts.acknowledged.get() + counts.gaveUp.get(), n -> n >= 1);
      }
    }

    ConsumerInfo info = f.jsm.getConsumerInfo(f.stream, "billing");
    assertThat(info.getRedelivered()).as("messages delivered again").isZero();
    assertThat(info.getDelivered().getConsumerSequence()).as("deliveries").isEqualTo(1);
    assertThat(counts.failed.get()).isZero();
    assertThat(counts.gaveUp.get()).isZero();
    assertThat(counts.acknowledged.get()).isEqualTo(1);
    assertThat(deliveredWhenProcessed.get()).isEqualTo(1);
    assertThat(f.effectIds()).containsExactly(m.id().toString());
  }

  @Test
  void aBatchThatTakesLongerThanTheAckWaitIsKeptInProgressToItsLastMessage() throws Exception {
    // eight messages fetched together, each taking 0.25 s of work (less than a third of the ack wait): the batch takes
    // 2 s against a 1 s ack wait, and JetStream must deliver none of the later ones again while they wait their turn
    List<OutboxMessage> messages = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      messages.add(f.message());
    }
    messages.forEach(this::publish);
    List<Long> deliveredWhenProcessed = new CopyOnWriteArrayList<>();
    InboxHandler slow = (tx, event) -> {
      deliveredWhenProcessed.add(event.message(Message.class).metaData().deliveredCount());
      LockSupport.parkNanos(Duration.ofMillis(250).toNanos()); // the work's own duration, not a race
      return f.recordEffect().handle(tx, event);
    };

    try (NatsInboxConsumer consumer = consumer(slow).ackWait(Duration.ofSeconds(1)).build().start()) {
      Eventually.await("the first message in hand", WAIT, deliveredWhenProcessed::size, n -> n >= 1);
      // another instance pulling from the same durable consumer gets what JetStream delivers again
      JetStreamSubscription other = f.nats.jetStream().subscribe(f.subject,
          PullSubscribeOptions.bind(f.stream, consumer.durable()));
      List<Message> again = other.fetch(1, Duration.ofSeconds(2));
      other.unsubscribe();
      assertThat(again).as("deliveries of messages in hand to another puller").isEmpty();
      Eventually.await("the eight messages acknowledged", WAIT, counts.acknowledged::get, n -> n == 8);
    }

    ConsumerInfo info = f.jsm.getConsumerInfo(f.stream, "billing");
    assertThat(info.getRedelivered()).as("messages delivered again").isZero();
    assertThat(deliveredWhenProcessed).hasSize(8).containsOnly(1L);
    assertThat(counts.duplicates.get()).isZero();
    assertThat(f.effectCount()).isEqualTo(8);
  }

  @Test
  void aDatabaseOutageLongerThanMaxDeliverIsWaitedOutWithoutCountingADelivery() throws Exception {
    // the database refuses the next six connections, twice as many as JetStream may deliver the message
    DatabaseOutage outage = DatabaseOutage.refusing(TestPostgres.postgres(), 6);
    Inbox unreliable = Inbox.builder(JdbcInboxStore.builder(outage.dataSource()).dialect(JdbcDialect.POSTGRESQL)
        .table(f.inboxTable).build()).listener(counts).build();
    OutboxMessage m = f.message();
    AtomicLong deliveredWhenProcessed = new AtomicLong();
    InboxHandler effect = (tx, event) -> {
      Message msg = event.message(Message.class);
      deliveredWhenProcessed.set(msg.metaData().deliveredCount());
      return f.recordEffect().handle(tx, event);
    };

    try (NatsInboxConsumer consumer = NatsInboxConsumer.builder(f.nats, unreliable, "billing", f.stream, f.subject)
        .handler(effect).listener(counts).fetchWait(Duration.ofMillis(100)).maxDeliver(3)
        .nakBackoff(Duration.ofMillis(10), Duration.ofMillis(50)).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged or given up on", WAIT,
          () -> counts.acknowledged.get() + counts.gaveUp.get(), n -> n >= 1);
      assertThat(counts.gaveUp.get()).as("messages given up on during the outage").isZero();
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(outage.refused()).isEqualTo(6);
    assertThat(counts.paused.get()).isEqualTo(6);
    assertThat(counts.failed.get()).isZero();
    assertThat(counts.acknowledged.get()).isEqualTo(1);
    assertThat(deliveredWhenProcessed.get()).as("the outage counted no delivery").isEqualTo(1);
    assertThat(f.effectIds()).containsExactly(m.id().toString());
  }

  @Test
  void aHandlerThatInterruptsItsThreadDoesNotDisturbConsumption() throws Exception {
    OutboxMessage m = f.message();
    AtomicInteger calls = new AtomicInteger();
    InboxHandler interruptsOnce = (tx, event) -> {
      String result = f.recordEffect().handle(tx, event);
      if (calls.incrementAndGet() == 1) {
        Thread.currentThread().interrupt();
      }
      return result;
    };

    try (NatsInboxConsumer consumer = consumer(interruptsOnce).build().start()) {
      publish(m);
      Eventually.await("the first message settled", WAIT,
          () -> counts.acknowledged.get() + counts.failed.get(), n -> n >= 1);
      List<OutboxMessage> later = List.of(f.message(), f.message(), f.message());
      for (OutboxMessage l : later) {
        publish(l);
      }
      Eventually.await("the later messages processed", WAIT, () -> {
        long n = 0;
        for (OutboxMessage l : later) {
          n += f.effectCount(l.id().toString());
        }
        return n;
      }, n -> n == 3);
      Eventually.await("the first message processed", WAIT, () -> f.effectCount(m.id().toString()), n -> n == 1);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(f.effectCount()).isEqualTo(4);
    assertThat(f.eventsWithSeveralEffects()).isZero();
  }

  @Test
  void startingOnAMissingStreamFailsWithTheStreamNamed() {
    NatsInboxConsumer consumer = NatsInboxConsumer.builder(f.nats, inbox, "billing", "NO_SUCH_STREAM_" + f.suffix,
        f.subject).handler(f.recordEffect()).build();

    assertThatThrownBy(consumer::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("NO_SUCH_STREAM_" + f.suffix)
        .hasMessageContaining("stream not found");
    consumer.close();
  }

  @Test
  void theBuilderRefusesBadConfiguration() {
    assertThatThrownBy(() -> NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject).build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("handler is required");
    assertThatThrownBy(() -> NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject)
        .ackWait(Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ackWait must be 1 s to 12 h");
    assertThatThrownBy(() -> NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject)
        .durable("a.b"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("durable must be");
  }
}
