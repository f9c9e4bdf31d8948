package dev.idem.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.OutboxMessage;
import dev.idem.test.DatabaseOutage;
import dev.idem.test.Eventually;
import dev.idem.test.TcpProxy;
import dev.idem.test.TestPostgres;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The inbox consumer on the real RabbitMQ and PostgreSQL: one effect per message id, acknowledged after commit. */
class RabbitMqInboxConsumerTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  private RabbitFixture f;
  private RabbitFixture.Counts counts;
  private Inbox inbox;
  private RabbitMqTransport transport;

  @BeforeEach
  void setUp() throws Exception {
    f = new RabbitFixture();
    counts = new RabbitFixture.Counts();
    inbox = f.inbox(counts);
    transport = RabbitMqTransport.builder(Rabbit.factory()).name("consumer-test").build();
  }

  @AfterEach
  void tearDown() throws Exception {
    transport.close();
    f.close();
  }

  private RabbitMqInboxConsumer.Builder consumer(InboxHandler handler) {
    return RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue).handler(handler)
        .listener(counts).failurePause(Duration.ofMillis(1));
  }

  private void publish(OutboxMessage m) {
    assertThat(transport.sendAll(List.of(m))).extracting(DeliveryResult::isDelivered).containsExactly(true);
  }

  @Test
  void aRedeliveredMessageIsAcknowledgedAsADuplicateAndHasOneEffect() throws Exception {
    OutboxMessage m = f.message(f.toExchange());

    try (RabbitMqInboxConsumer consumer = consumer(f.recordEffect()).build().start()) {
      publish(m);
      publish(m); // RabbitMQ has no broker-side dedupe: both copies reach the queue
      Eventually.await("both copies acknowledged", WAIT, counts.acknowledged::get, n -> n == 2);
    }

    assertThat(counts.duplicates.get()).isEqualTo(1);
    assertThat(counts.acknowledgedDuplicates.get()).isEqualTo(1);
    assertThat(counts.processed.get()).isEqualTo(1);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
    assertThat(f.ready(f.queue)).isZero();
  }

  /**
   * Records the effect and, for each call, whether the message's inbox record was already in the handler's
   * transaction (the usual order) or not (the first-delivery order); its first {@code failures} calls fail.
   */
  private InboxHandler orderWatching(List<Boolean> recordedFirst, int failures) {
    return (tx, event) -> {
      recordedFirst.add(TestPostgres.inboxRecorded(tx.unwrap(Connection.class), f.inboxTable, "billing",
          event.eventId()));
      if (recordedFirst.size() <= failures) {
        throw new IllegalStateException("injected failure");
      }
      return f.recordEffect().handle(tx, event);
    };
  }

  @Test
  void inTheFirstDeliveryOrderANewMessageRunsTheHandlerFirstAndARepublishedCopyIsStillADuplicate()
      throws Exception {
    OutboxMessage m = f.message(f.toExchange());
    List<Boolean> recordedFirst = new CopyOnWriteArrayList<>();

    try (RabbitMqInboxConsumer consumer = consumer(orderWatching(recordedFirst, 0)).firstDeliveryOrder(true)
        .build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      publish(m); // a relay's copy: not flagged redelivered, so it takes the first-delivery order too
      Eventually.await("the copy acknowledged", WAIT, counts.acknowledged::get, n -> n == 2);
    }

    // the message's run, without its record yet; then the copy's, which finds the message's committed record, and
    // whose writes roll back before the usual order skips it (that order alone would not run the handler for it)
    assertThat(recordedFirst).containsExactly(false, true);
    assertThat(counts.processed.get()).isEqualTo(1);
    assertThat(counts.duplicates.get()).isEqualTo(1);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void inTheFirstDeliveryOrderAMessageTheBrokerRedeliversRecordsFirst() throws Exception {
    OutboxMessage m = f.message(f.toExchange());
    publish(m);
    try (com.rabbitmq.client.Connection other = Rabbit.factory().newConnection("idem-test-unacked")) {
      GetResponse taken = other.createChannel().basicGet(f.queue, false);
      assertThat(taken).as("taken without an ack").isNotNull();
    } // the connection closes with the message unacknowledged: RabbitMQ requeues it, flagged redelivered
    List<Boolean> recordedFirst = new CopyOnWriteArrayList<>();
    AtomicBoolean redelivered = new AtomicBoolean();
    InboxHandler watching = orderWatching(recordedFirst, 0);
    InboxHandler handler = (tx, event) -> {
      redelivered.set(event.message(Delivery.class).getEnvelope().isRedeliver());
      return watching.handle(tx, event);
    };

    try (RabbitMqInboxConsumer consumer = consumer(handler).firstDeliveryOrder(true).build().start()) {
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    assertThat(redelivered).isTrue();
    assertThat(recordedFirst).as("no failure remembered: the redelivered flag alone chose the usual order")
        .containsExactly(true);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void inTheFirstDeliveryOrderARedeliveryRecordsFirst() throws Exception {
    OutboxMessage m = f.message(f.toExchange());
    List<Boolean> recordedFirst = new CopyOnWriteArrayList<>();

    try (RabbitMqInboxConsumer consumer = consumer(orderWatching(recordedFirst, 2)).firstDeliveryOrder(true)
        .build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    assertThat(recordedFirst).as("the first-delivery try and the usual order's, both failing; the redelivery")
        .containsExactly(false, true, true);
    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void aFailingHandlerRequeuesTheMessageWhichIsThenProcessedOnce() throws Exception {
    OutboxMessage m = f.message(f.toExchange());
    AtomicInteger calls = new AtomicInteger();
    AtomicBoolean lastWasRedelivery = new AtomicBoolean();
    InboxHandler failsOnce = (tx, event) -> {
      Delivery d = event.message(Delivery.class);
      if (calls.incrementAndGet() == 1) {
        throw new IllegalStateException("injected failure");
      }
      lastWasRedelivery.set(d.getEnvelope().isRedeliver());
      return f.recordEffect().handle(tx, event);
    };

    try (RabbitMqInboxConsumer consumer = consumer(failsOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    assertThat(calls.get()).isEqualTo(2);
    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(lastWasRedelivery.get()).isTrue();
    assertThat(f.effectCount()).isEqualTo(1);
    assertThat(inbox.contains("billing", m.id().toString())).isTrue();
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void aMessageWhoseTransactionFailsToCommitIsNotAcknowledgedButRedelivered() throws Exception {
    // a deferred constraint fails at COMMIT, after the handler has returned: acknowledging after the handler (rather
    // than after the commit) would lose the message
    String gate = f.table("rmq_gate", "(k INT, CONSTRAINT rmq_gate_u_" + f.suffix
        + " UNIQUE (k) DEFERRABLE INITIALLY DEFERRED)");
    OutboxMessage m = f.message(f.toExchange());
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

    try (RabbitMqInboxConsumer consumer = consumer(commitFailsOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    assertThat(calls.get()).isEqualTo(2);
    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void theSameIdWithAnotherPayloadIsDeadLetteredNotProcessed() throws Exception {
    OutboxMessage m = f.message(f.toExchange());

    try (RabbitMqInboxConsumer consumer = consumer(f.recordEffect()).build().start()) {
      publish(m);
      Eventually.await("the original acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      f.admin.basicPublish("", f.queue, new AMQP.BasicProperties.Builder().messageId(m.id().toString()).build(),
          "{\"tampered\":true}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the altered copy dead-lettered", WAIT, () -> f.ready(f.deadLetters), n -> n == 1);
    }

    assertThat(counts.consumerMismatches.get()).isEqualTo(1);
    assertThat(counts.mismatches.get()).isEqualTo(1);
    GetResponse dead = f.admin.basicGet(f.deadLetters, true);
    assertThat(dead.getProps().getMessageId()).isEqualTo(m.id().toString());
    assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("{\"tampered\":true}");
    assertThat(f.effectCount()).isEqualTo(1);
  }

  @Test
  void aMessageWithoutMessageIdIsRejectedWithoutRequeue() throws Exception {
    try (RabbitMqInboxConsumer consumer = consumer(f.recordEffect()).build().start()) {
      f.admin.basicPublish("", f.queue, new AMQP.BasicProperties.Builder().build(),
          "{}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the message dead-lettered", WAIT, () -> f.ready(f.deadLetters), n -> n == 1);
    }

    assertThat(counts.rejected.get()).isEqualTo(1);
    assertThat(counts.processed.get()).isZero();
    assertThat(f.effectCount()).isZero();
  }

  @Test
  void aFallbackCanTakeTheIdFromAnotherProducersHeader() throws Exception {
    InboxHandler handler = (tx, event) -> {
      Delivery d = event.message(Delivery.class);
      String legacyId = String.valueOf(d.getProperties().getHeaders().get("legacy-id"));
      TestPostgres.insertEffect(tx.unwrap(Connection.class), f.effects, legacyId);
      return null;
    };
    AMQP.BasicProperties legacy = new AMQP.BasicProperties.Builder().headers(Map.of("legacy-id", "L-42")).build();

    try (RabbitMqInboxConsumer consumer = consumer(handler)
        .messageIdFallback(d -> String.valueOf(d.getProperties().getHeaders().get("legacy-id"))).build().start()) {
      f.admin.basicPublish("", f.queue, legacy, "{}".getBytes(StandardCharsets.UTF_8));
      f.admin.basicPublish("", f.queue, legacy, "{}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("both acknowledged", WAIT, counts.acknowledged::get, n -> n == 2);
    }

    assertThat(f.effectCount("L-42")).isEqualTo(1);
    assertThat(counts.duplicates.get()).isEqualTo(1);
    assertThat(inbox.contains("billing", "L-42")).isTrue();
  }

  @Test
  void anErrorThrownByTheHandlerRequeuesTheMessageAndTheConsumerGoesOn() throws Exception {
    OutboxMessage m = f.message(f.toExchange());
    OutboxMessage next = f.message(f.toExchange());
    AtomicInteger calls = new AtomicInteger();
    InboxHandler errorOnce = (tx, event) -> {
      if (calls.incrementAndGet() == 1) {
        throw new AssertionError("injected Error");
      }
      return f.recordEffect().handle(tx, event);
    };

    try (RabbitMqInboxConsumer consumer = consumer(errorOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      assertThat(consumer.isRunning()).isTrue();
      publish(next);
      Eventually.await("the next message acknowledged", WAIT, counts.acknowledged::get, n -> n == 2);
    }

    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
    assertThat(f.effectCount(next.id().toString())).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(2);
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void aVirtualMachineErrorClosesTheChannelWhichIsReopenedAndTheMessageProcessedOnce() throws Exception {
    OutboxMessage m = f.message(f.toExchange());
    AtomicInteger calls = new AtomicInteger();
    InboxHandler overflowOnce = (tx, event) -> {
      if (calls.incrementAndGet() == 1) {
        throw new StackOverflowError("injected");
      }
      return f.recordEffect().handle(tx, event);
    };

    try (RabbitMqInboxConsumer consumer = consumer(overflowOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged on a reopened channel", WAIT, counts.acknowledged::get, n -> n == 1);
      Eventually.await("the consumer running", WAIT, () -> consumer.isRunning() ? 1 : 0, n -> n == 1);
    }

    assertThat(calls.get()).isEqualTo(2);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
  }

  @Test
  void aQueueDeletedAndDeclaredAgainIsConsumedAgainAndTheBrokersCancelIsReported() throws Exception {
    OutboxMessage before = f.message(f.toExchange());
    OutboxMessage after = f.message(f.toExchange());

    try (RabbitMqInboxConsumer consumer = consumer(f.recordEffect()).channels(2).build().start()) {
      publish(before);
      Eventually.await("the first message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      f.admin.queueDelete(f.queue); // RabbitMQ cancels the subscriptions with basic.cancel
      Eventually.await("the cancels reported", WAIT, () -> cancels(counts.receiveFailures), n -> n == 2);
      Eventually.await("not running while the queue is missing", WAIT, consumer::isRunning, running -> !running);
      Eventually.await("subscribing again refused while the queue is missing", WAIT,
          () -> counts.receiveFailures.stream().filter(e -> String.valueOf(e.getMessage()).contains("NOT_FOUND")
              || String.valueOf(e.getCause()).contains("NOT_FOUND")).count(), n -> n >= 2);
      f.declareQueue();
      Eventually.await("subscribed again", WAIT, consumer::isRunning, running -> running);
      publish(after);
      Eventually.await("the message published after the queue came back acknowledged", WAIT,
          counts.acknowledged::get, n -> n == 2);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrder(before.id().toString(), after.id().toString());
    assertThat(counts.receiveFailures.get(0)).hasMessageContaining("cancelled the subscription")
        .hasMessageContaining(f.queue);
    assertThat(counts.stopped).isEmpty();
    assertThat(f.ready(f.queue)).isZero();
  }

  private static long cancels(List<Throwable> failures) {
    return failures.stream().filter(e -> String.valueOf(e.getMessage()).contains("cancelled the subscription"))
        .count();
  }

  @Test
  void aConnectionItsOwnerClosesStopsTheConsumerAndIsReported() throws Exception {
    com.rabbitmq.client.Connection own = Rabbit.factory().newConnection("idem-test-owner");
    try (RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(own, inbox, "billing", f.queue)
        .handler(f.recordEffect()).listener(counts).build().start()) {
      assertThat(consumer.isRunning()).isTrue();
      own.close();
      Eventually.await("the stop reported", WAIT, counts.stopped::size, n -> n == 1);
      assertThat(consumer.isRunning()).isFalse();
    }

    assertThat(counts.stopped).hasSize(1);
  }

  @Test
  void aThrowingMessageIdFallbackRejectsThatMessageAndTheConsumerGoesOn() throws Exception {
    OutboxMessage m = f.message(f.toExchange());
    try (RabbitMqInboxConsumer consumer = consumer(f.recordEffect())
        .messageIdFallback(d -> {
          throw new IllegalStateException("injected fallback failure");
        })
        .build().start()) {
      f.admin.basicPublish("", f.queue, new AMQP.BasicProperties.Builder().build(),
          "{}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the anonymous message dead-lettered", WAIT, () -> f.ready(f.deadLetters), n -> n == 1);
      publish(m);
      Eventually.await("the next message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(counts.rejected.get()).isEqualTo(1);
    assertThat(f.effectIds()).containsExactly(m.id().toString());
  }

  @Test
  void theWaitBeforeAFailedMessageIsRequeuedDoublesUpToTheMaximum() throws Exception {
    OutboxMessage poison = f.message(f.toExchange());
    List<Long> calls = new CopyOnWriteArrayList<>();
    InboxHandler failing = (tx, event) -> {
      calls.add(System.nanoTime());
      throw new IllegalStateException("injected failure");
    };

    try (RabbitMqInboxConsumer consumer = consumer(failing).failurePause(Duration.ofMillis(50))
        .maxFailurePause(Duration.ofMillis(200)).maxFailures(5).build().start()) {
      publish(poison);
      Eventually.await("the message dead-lettered", WAIT, () -> f.ready(f.deadLetters), n -> n == 1);
    }

    assertThat(counts.retries).extracting(d -> d.after().toMillis()).containsExactly(50L, 100L, 200L, 200L);
    assertThat(calls).hasSize(5);
    for (int i = 1; i < calls.size(); i++) {
      assertThat(Duration.ofNanos(calls.get(i) - calls.get(i - 1))).as("wait before try %d", i + 1)
          .isGreaterThanOrEqualTo(counts.retries.get(i - 1).after());
    }
    assertThat(counts.gaveUpFailures.get()).isEqualTo(5);
  }

  @Test
  void withoutAMaximumTheFailurePauseDoublesUpToThirtySecondsOrItselfWhenLonger() {
    RabbitMqInboxConsumer.Builder b = RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue)
        .handler(f.recordEffect());

    assertThat(b.build().toString()).contains("failurePause=100..30000 ms");
    assertThat(b.failurePause(Duration.ofSeconds(45)).build().toString()).contains("failurePause=45000..45000 ms");
    assertThat(b.failurePause(Duration.ofSeconds(1)).maxFailurePause(Duration.ofSeconds(1)).build().toString())
        .contains("failurePause=1000..1000 ms");
  }

  @Test
  void aMessageThatKeepsFailingIsDeadLetteredAfterMaxFailuresAndTheNextOneIsProcessed() throws Exception {
    OutboxMessage poison = f.message(f.toExchange());
    OutboxMessage next = f.message(f.toExchange());
    AtomicInteger poisonCalls = new AtomicInteger();
    InboxHandler poisonFails = (tx, event) -> {
      Delivery d = event.message(Delivery.class);
      if (d.getProperties().getMessageId().equals(poison.id().toString())) {
        poisonCalls.incrementAndGet();
        throw new IllegalStateException("injected poison");
      }
      return f.recordEffect().handle(tx, event);
    };

    try (RabbitMqInboxConsumer consumer = consumer(poisonFails).maxFailures(3).build().start()) {
      publish(poison);
      publish(next);
      Eventually.await("the poison message dead-lettered", WAIT, () -> f.ready(f.deadLetters), n -> n == 1);
      Eventually.await("the next message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(poisonCalls.get()).isEqualTo(3);
    assertThat(counts.failed.get()).isEqualTo(2);
    assertThat(counts.gaveUp.get()).isEqualTo(1);
    assertThat(counts.gaveUpFailures.get()).isEqualTo(3);
    GetResponse dead = f.admin.basicGet(f.deadLetters, true);
    assertThat(dead.getProps().getMessageId()).isEqualTo(poison.id().toString());
    // without a dead-letter exchange of the consumer's, RabbitMQ dead-letters it as it came: x-death, no history
    assertThat(dead.getProps().getHeaders()).containsKey("x-death")
        .noneSatisfy((name, value) -> assertThat(name).startsWith("idem-dlt-"));
    assertThat(f.effectIds()).containsExactly(next.id().toString());
    assertThat(f.ready(f.queue)).isZero();
  }

  /** A handler that fails on {@code poison} (counting its calls) and records the effect of any other message. */
  private InboxHandler failsOn(OutboxMessage poison, AtomicInteger poisonCalls) {
    return (tx, event) -> {
      if (event.eventId().equals(poison.id().toString())) {
        poisonCalls.incrementAndGet();
        throw new IllegalStateException("injected poison " + event.eventId());
      }
      return f.recordEffect().handle(tx, event);
    };
  }

  private static String header(GetResponse r, String name) {
    Object value = r.getProps().getHeaders().get(name);
    return value == null ? null : value.toString();
  }

  @Test
  void withADeadLetterExchangeAPoisonMessageIsRepublishedOnceWithItsAttemptHistoryThenAcknowledged()
      throws Exception {
    OutboxMessage poison = f.message(f.toExchange());
    OutboxMessage next = f.message(f.toExchange());
    AtomicInteger poisonCalls = new AtomicInteger();

    try (RabbitMqInboxConsumer consumer = consumer(failsOn(poison, poisonCalls)).maxFailures(3)
        .deadLetterExchange(f.idemDeadLetterExchange, "dead").build().start()) {
      publish(poison);
      publish(next);
      Eventually.await("the poison message dead-lettered", WAIT, () -> f.ready(f.idemDeadLetters), n -> n == 1);
      Eventually.await("the next message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    // closed: a message left unacknowledged would be back on the queue now
    assertThat(f.ready(f.queue)).isZero();
    assertThat(f.ready(f.deadLetters)).as("the queue's own dead-letter queue").isZero();
    assertThat(f.ready(f.idemDeadLetters)).isEqualTo(1);
    GetResponse dead = f.admin.basicGet(f.idemDeadLetters, true);
    assertThat(dead.getProps().getMessageId()).isEqualTo(poison.id().toString());
    assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo(poison.payload());
    assertThat(header(dead, "tenant")).as("the original's headers").isEqualTo("t-1");
    assertThat(header(dead, "idem-dlt-reason")).isEqualTo("handler_failed");
    assertThat(header(dead, "idem-dlt-consumer")).isEqualTo("billing");
    assertThat(header(dead, "idem-dlt-queue")).isEqualTo(f.queue);
    assertThat(header(dead, "idem-dlt-exchange")).isEqualTo(f.exchange);
    assertThat(header(dead, "idem-dlt-routing-key")).isEqualTo("events");
    assertThat(header(dead, "idem-dlt-attempts")).isEqualTo("3");
    for (int i = 1; i <= 3; i++) {
      assertThat(header(dead, "idem-dlt-attempt-" + i))
          .contains("IllegalStateException: injected poison " + poison.id());
    }
    assertThat(header(dead, "idem-dlt-attempt-4")).isNull();
    assertThat(poisonCalls.get()).isEqualTo(3);
    assertThat(counts.gaveUp.get()).isEqualTo(1);
    assertThat(counts.gaveUpFailures.get()).isEqualTo(3);
    assertThat(counts.deadLetterFailed.get()).isZero();
    assertThat(f.effectIds()).containsExactly(next.id().toString());
  }

  @Test
  void aDeadLetterConnectionSlowToOpenHoldsUpOnlyItsMessageAndOnlyForTheDeadLetterTimeout() throws Exception {
    OutboxMessage poison = f.message(f.toExchange());
    OutboxMessage good = f.message(f.toExchange());
    List<Long> poisonCalls = new CopyOnWriteArrayList<>();
    InboxHandler poisonFails = (tx, event) -> {
      if (event.eventId().equals(poison.id().toString())) {
        poisonCalls.add(System.nanoTime());
        throw new IllegalStateException("injected poison");
      }
      return f.recordEffect().handle(tx, event);
    };
    ConnectionFactory factory = Rabbit.factory();
    factory.setHandshakeTimeout(60_000);
    // a port that takes TCP connections and never answers the AMQP handshake: a broker that does not respond
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(factory, inbox, "billing", f.queue)
            .handler(poisonFails).listener(counts).failurePause(Duration.ofMillis(1)).maxFailures(1).channels(2)
            .prefetch(1).deadLetterExchange(f.idemDeadLetterExchange, "dead").deadLetterTimeout(Duration.ofSeconds(5))
            .shutdownTimeout(Duration.ofSeconds(1)).build().start()) {
      factory.setPort(silent.getLocalPort()); // the dead letters' connection is opened on the first dead letter
      publish(poison);
      Eventually.await("the poison message failed", WAIT, poisonCalls::size, n -> n == 1);
      publish(good); // the poison's channel has its one unacknowledged message: the other channel takes this one
      Eventually.await("the other channel's message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      assertThat(counts.deadLetterFailed.get()).as("dead letters failed when the other message was acknowledged")
          .isZero();
      Eventually.await("the dead letter failed", WAIT, counts.deadLetterFailed::get, n -> n >= 1);
      assertThat(Duration.ofNanos(System.nanoTime() - poisonCalls.get(0))).as("the wait for the connection")
          .isLessThan(Duration.ofSeconds(15));
    }

    assertThat(poisonCalls).hasSize(1);
    assertThat(f.effectIds()).containsExactly(good.id().toString());
    assertThat(f.ready(f.idemDeadLetters)).isZero();
  }

  @Test
  void aBrokerThatDoesNotAnswerTheDeadLetterCountsNothingAndTheMessageWaitsForIt() throws Exception {
    // one refusal would reject the message; a broker that does not answer (a memory or disk alarm blocks publishers)
    // is no refusal: the message is requeued and waits, then dead-lettered once the broker answers again
    OutboxMessage poison = f.message(f.toExchange());
    AtomicInteger calls = new AtomicInteger();
    InboxHandler fails = (tx, event) -> {
      calls.incrementAndGet();
      throw new IllegalStateException("injected poison");
    };
    ConnectionFactory factory = Rabbit.factory();
    int brokerPort = factory.getPort();
    factory.setHandshakeTimeout(500);
    // a port that takes TCP connections and never answers the AMQP handshake: a broker that does not respond
    try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(factory, inbox, "billing", f.queue)
            .handler(fails).listener(counts).failurePause(Duration.ofMillis(1)).maxFailures(1)
            .deadLetterExchange(f.idemDeadLetterExchange, "dead").deadLetterAttempts(1)
            .deadLetterTimeout(Duration.ofSeconds(1)).shutdownTimeout(Duration.ofSeconds(1)).build().start()) {
      factory.setPort(silent.getLocalPort()); // the dead letters' connection is opened on the first dead letter
      publish(poison);
      Eventually.await("two dead letters that did not get through", WAIT, counts.deadLetterFailed::get, n -> n >= 2);
      assertThat(counts.rejected.get()).as("rejected without requeue").isZero();

      factory.setPort(brokerPort); // the broker answers again
      Eventually.await("the message dead-lettered", WAIT, () -> f.ready(f.idemDeadLetters), n -> n == 1);
    }

    assertThat(calls.get()).as("the handler ran once; the redeliveries were only dead-lettered").isEqualTo(1);
    assertThat(f.ready(f.deadLetters)).as("the queue's own dead letters").isZero();
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void withADeadLetterExchangeAMessageWithoutIdIsRepublishedAsRefused() throws Exception {
    try (RabbitMqInboxConsumer consumer = consumer(f.recordEffect())
        .deadLetterExchange(f.idemDeadLetterExchange, "dead").build().start()) {
      f.admin.basicPublish("", f.queue, new AMQP.BasicProperties.Builder().build(),
          "{}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the message dead-lettered", WAIT, () -> f.ready(f.idemDeadLetters), n -> n == 1);
    }

    GetResponse dead = f.admin.basicGet(f.idemDeadLetters, true);
    assertThat(header(dead, "idem-dlt-reason")).isEqualTo("missing_event_id");
    assertThat(header(dead, "idem-dlt-attempts")).isEqualTo("0");
    assertThat(header(dead, "idem-dlt-exchange")).isEmpty(); // published to the default exchange
    assertThat(counts.rejected.get()).isEqualTo(1);
    assertThat(f.ready(f.queue)).isZero();
    assertThat(f.ready(f.deadLetters)).isZero();
  }

  @Test
  void theCopyLeavesOutTheOriginalsExpirationUserIdAndCcHeader() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    InboxHandler fails = (tx, event) -> {
      calls.incrementAndGet();
      throw new IllegalStateException("injected poison");
    };

    try (RabbitMqInboxConsumer consumer = consumer(fails).maxFailures(1)
        .deadLetterExchange(f.idemDeadLetterExchange, "dead").build().start()) {
      // the user-id must be the publishing connection's user: RabbitMQ refuses any other (guest here)
      f.admin.basicPublish("", f.queue, new AMQP.BasicProperties.Builder().messageId("expiring-" + f.suffix)
          .expiration("60000").userId("guest").headers(Map.of("CC", List.of("elsewhere"), "tenant", "t-1")).build(),
          "{}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the message dead-lettered", WAIT, () -> f.ready(f.idemDeadLetters), n -> n == 1);
    }

    GetResponse dead = f.admin.basicGet(f.idemDeadLetters, true);
    assertThat(dead.getProps().getMessageId()).isEqualTo("expiring-" + f.suffix);
    assertThat(dead.getProps().getExpiration()).as("expiration").isNull();
    assertThat(dead.getProps().getUserId()).as("user-id").isNull();
    assertThat(dead.getProps().getHeaders()).doesNotContainKey("CC").containsKey("tenant");
    assertThat(header(dead, "idem-dlt-attempts")).isEqualTo("1");
    assertThat(calls.get()).isEqualTo(1);
    assertThat(counts.gaveUp.get()).isEqualTo(1);
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void startingWithADeadLetterExchangeThatDoesNotExistFailsWithTheExchangeNamed() {
    RabbitMqInboxConsumer consumer = consumer(f.recordEffect())
        .deadLetterExchange("idem-test-missing-x-" + f.suffix, "dead").build();

    assertThatThrownBy(consumer::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("dead-letter exchange 'idem-test-missing-x-" + f.suffix + "'")
        .hasMessageContaining("NOT_FOUND");
    consumer.close();
  }

  @Test
  void aDeadLetterExchangeDeletedAfterTheStartLeavesTheMessageRequeuedAndTheHandlerIsNotRunAgain()
      throws Exception {
    String exchange = "idem-test-gone-x-" + f.suffix;
    f.admin.exchangeDeclare(exchange, BuiltinExchangeType.DIRECT, false, true, null);
    assertDeadLetterFailureRequeues(exchange, "dead", () -> f.admin.exchangeDelete(exchange));
  }

  @Test
  void aDeadLetterExchangeThatRoutesTheMessageNowhereLeavesItRequeued() throws Exception {
    assertDeadLetterFailureRequeues(f.idemDeadLetterExchange, "no-such-binding", () -> { });
  }

  @Test
  void aDeadLetterThatKeepsFailingEndsRejectedToTheQueuesOwnDeadLetterExchange() throws Exception {
    String exchange = "idem-test-gone-x-" + f.suffix;
    f.admin.exchangeDeclare(exchange, BuiltinExchangeType.DIRECT, false, true, null);
    OutboxMessage poison = f.message(f.toExchange());
    AtomicInteger poisonCalls = new AtomicInteger();

    try (RabbitMqInboxConsumer consumer = consumer(failsOn(poison, poisonCalls)).maxFailures(1)
        .deadLetterExchange(exchange, "dead").deadLetterAttempts(2).build().start()) {
      f.admin.exchangeDelete(exchange);
      publish(poison);
      Eventually.await("the message rejected to the queue's dead-letter queue", WAIT, () -> f.ready(f.deadLetters),
          n -> n == 1);
    }

    assertThat(counts.deadLetterFailed.get()).as("failed republications").isEqualTo(2);
    assertThat(counts.gaveUp.get()).as("reported given up on, once").isEqualTo(1);
    assertThat(poisonCalls.get()).isEqualTo(1);
    assertThat(f.ready(f.queue)).isZero();
    GetResponse dead = f.admin.basicGet(f.deadLetters, true);
    assertThat(dead.getProps().getMessageId()).isEqualTo(poison.id().toString());
    assertThat(dead.getProps().getHeaders()).containsKey("x-death");
  }

  /** Something the test does once the consumer has started. */
  private interface Step {
    void run() throws Exception;
  }

  private void assertDeadLetterFailureRequeues(String exchange, String routingKey, Step afterStart)
      throws Exception {
    OutboxMessage poison = f.message(f.toExchange());
    AtomicInteger poisonCalls = new AtomicInteger();

    try (RabbitMqInboxConsumer consumer = consumer(failsOn(poison, poisonCalls)).maxFailures(2)
        .deadLetterExchange(exchange, routingKey).deadLetterTimeout(Duration.ofSeconds(5)).build().start()) {
      afterStart.run();
      publish(poison);
      // the first failed republication, then a second one, on the redelivery
      Eventually.await("the dead letter failing twice", WAIT, counts.deadLetterFailed::get, n -> n >= 2);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(poisonCalls.get()).as("handler calls: none after the message was given up on").isEqualTo(2);
    assertThat(counts.gaveUp.get()).as("reported dead-lettered").isZero();
    assertThat(counts.failed.get()).as("failures counted").isEqualTo(1);
    assertThat(f.ready(f.queue)).as("the message, back on its queue").isEqualTo(1);
    assertThat(f.ready(f.idemDeadLetters)).isZero();
    assertThat(f.ready(f.deadLetters)).isZero();
    GetResponse back = f.admin.basicGet(f.queue, true);
    assertThat(back.getProps().getMessageId()).isEqualTo(poison.id().toString());
  }

  @Test
  void aDatabaseOutageLongerThanMaxFailuresIsWaitedOutWithoutCountingAgainstTheMessage() throws Exception {
    // the database refuses the next six connections, three times as many as the message may fail
    DatabaseOutage outage = DatabaseOutage.refusing(TestPostgres.postgres(), 6);
    Inbox unreliable = Inbox.builder(JdbcInboxStore.builder(outage.dataSource()).dialect(JdbcDialect.POSTGRESQL)
        .table(f.inboxTable).build()).listener(counts).build();
    OutboxMessage m = f.message(f.toExchange());

    try (RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(Rabbit.factory(), unreliable, "billing",
        f.queue).handler(f.recordEffect()).listener(counts).failurePause(Duration.ofMillis(1)).maxFailures(2).build()
        .start()) {
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
    assertThat(f.effectIds()).containsExactly(m.id().toString());
    assertThat(f.ready(f.deadLetters)).isZero();
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void onAQuorumQueueWithADeliveryLimitADatabaseOutageHoldsTheMessageInsteadOfRequeueingIt() throws Exception {
    // a requeue counts a delivery on a quorum queue: three would dead-letter the message with a limit of 2
    String quorum = quorumQueue(2);
    DatabaseOutage outage = DatabaseOutage.refusing(TestPostgres.postgres(), 8);
    Inbox unreliable = Inbox.builder(JdbcInboxStore.builder(outage.dataSource()).dialect(JdbcDialect.POSTGRESQL)
        .table(f.inboxTable).build()).listener(counts).build();
    List<Object> deliveryCounts = new CopyOnWriteArrayList<>();
    InboxHandler effect = f.recordEffect();
    OutboxMessage m = f.message("rabbitmq:/" + quorum);

    try (RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(Rabbit.factory(), unreliable, "billing",
        quorum).handler((tx, event) -> {
          Map<String, Object> headers = event.message(Delivery.class).getProperties().getHeaders();
          deliveryCounts.add(headers == null ? "none" : String.valueOf(headers.get("x-delivery-count")));
          return effect.handle(tx, event);
        }).listener(counts).failurePause(Duration.ofMillis(20)).maxFailures(2).build().start()) {
      publish(m);
      Eventually.await("the database refused at least five connections", WAIT, outage::refused, n -> n >= 5);
      Eventually.await("the message acknowledged or dead-lettered by the broker", WAIT,
          () -> counts.acknowledged.get() + f.ready(f.deadLetters), n -> n >= 1);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(outage.refused()).isEqualTo(8);
    assertThat(counts.paused.get()).isEqualTo(8);
    assertThat(counts.failed.get()).as("failures counted").isZero();
    assertThat(counts.gaveUp.get()).isZero();
    assertThat(counts.acknowledged.get()).isEqualTo(1);
    assertThat(f.effectIds()).containsExactly(m.id().toString());
    assertThat(deliveryCounts).as("x-delivery-count of the one delivery processed").containsExactly("null");
    assertThat(f.ready(f.deadLetters)).as("dead-lettered by the broker").isZero();
    assertThat(f.ready(quorum)).isZero();
  }

  @Test
  void closingWhileAMessageIsHeldThroughAnOutageIsPromptAndLeavesTheMessageOnItsQueue() throws Exception {
    String quorum = quorumQueue(20);
    DatabaseOutage outage = DatabaseOutage.refusing(TestPostgres.postgres(), 1_000_000);
    Inbox unreliable = Inbox.builder(JdbcInboxStore.builder(outage.dataSource()).dialect(JdbcDialect.POSTGRESQL)
        .table(f.inboxTable).build()).listener(counts).build();
    OutboxMessage m = f.message("rabbitmq:/" + quorum);
    RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(Rabbit.factory(), unreliable, "billing", quorum)
        .handler(f.recordEffect()).listener(counts).failurePause(Duration.ofSeconds(30)).build().start();
    long closed;
    try {
      publish(m);
      Eventually.await("the message held through the outage", WAIT, counts.paused::get, n -> n >= 1);
      Eventually.await("held, not requeued", WAIT, () -> f.ready(quorum), n -> n == 0);
      long before = System.nanoTime();
      consumer.close();
      closed = System.nanoTime() - before;
    } finally {
      consumer.close();
    }

    assertThat(Duration.ofNanos(closed)).as("close() while a 30 s pause holds the message")
        .isLessThan(Duration.ofSeconds(5));
    Eventually.await("the held message back on its queue", WAIT, () -> f.ready(quorum), n -> n == 1);
    assertThat(counts.paused.get()).isEqualTo(outage.refused());
    assertThat(counts.failed.get()).isZero();
    assertThat(counts.acknowledged.get()).isZero();
    assertThat(f.effectCount()).isZero();
    GetResponse back = f.admin.basicGet(quorum, true);
    assertThat(back.getProps().getMessageId()).isEqualTo(m.id().toString());
  }

  @Test
  void aHeldMessageALostConnectionReturnedCountsNoFailureWhenItComesBack() throws Exception {
    // the connection drops while the message is held: the quorum queue counts the return as a delivery
    String quorum = quorumQueue(20);
    DatabaseOutage outage = DatabaseOutage.refusing(TestPostgres.postgres(), 1_000_000);
    Inbox unreliable = Inbox.builder(JdbcInboxStore.builder(outage.dataSource()).dialect(JdbcDialect.POSTGRESQL)
        .table(f.inboxTable).build()).listener(counts).build();
    List<String> deliveryCounts = new CopyOnWriteArrayList<>();
    AtomicBoolean failedOnce = new AtomicBoolean();
    InboxHandler effect = f.recordEffect();
    OutboxMessage m = f.message("rabbitmq:/" + quorum);
    URI broker = URI.create(Rabbit.uri());
    ConnectionFactory factory = Rabbit.factory();
    factory.setHost("127.0.0.1");
    factory.setNetworkRecoveryInterval(1_000);

    try (TcpProxy proxy = new TcpProxy(broker.getHost(), broker.getPort() < 0 ? ConnectionFactory.DEFAULT_AMQP_PORT
        : broker.getPort())) {
      factory.setPort(proxy.port());
      try (RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(factory, unreliable, "billing", quorum)
          .handler((tx, event) -> {
            deliveryCounts.add(String.valueOf(event.message(Delivery.class).getProperties().getHeaders()
                .get("x-delivery-count")));
            if (failedOnce.compareAndSet(false, true)) {
              throw new IllegalStateException("the handler's one failure");
            }
            return effect.handle(tx, event);
          }).listener(counts).failurePause(Duration.ofMillis(20)).maxFailures(2).build().start()) {
        publish(m);
        Eventually.await("the message held through the outage", WAIT, counts.paused::get, n -> n >= 1);
        proxy.stop();
        Eventually.await("the connection lost", WAIT, consumer::isRunning, running -> !running);
        proxy.start();
        Eventually.await("the connection recovered", WAIT, consumer::isRunning, running -> running);
        int paused = counts.paused.get();
        Eventually.await("the returned message held again", WAIT, counts.paused::get, n -> n > paused);
        outage.end();
        Eventually.await("the message acknowledged or given up on", WAIT,
            () -> counts.acknowledged.get() + counts.gaveUp.get(), n -> n >= 1);
      }
    }

    assertThat(deliveryCounts).as("x-delivery-count of the deliveries whose handler ran: the return, then the"
        + " handler's failure").containsExactly("1", "2");
    assertThat(counts.failed.get()).as("failures counted").isEqualTo(1);
    assertThat(counts.gaveUp.get()).isZero();
    assertThat(counts.acknowledged.get()).isEqualTo(1);
    assertThat(f.effectIds()).containsExactly(m.id().toString());
    assertThat(f.ready(f.deadLetters)).isZero();
    assertThat(f.ready(quorum)).isZero();
  }

  /** A quorum queue of this test's, dead-lettering to the fixture's dead-letter queue, deleted after the test. */
  private String quorumQueue(int deliveryLimit) throws Exception {
    String quorum = "idem-test-qq-" + f.suffix;
    f.admin.queueDeclare(quorum, true, false, false, Map.of("x-queue-type", "quorum", "x-delivery-limit",
        deliveryLimit, "x-dead-letter-exchange", "", "x-dead-letter-routing-key", f.deadLetters));
    f.deleteAfterwards(quorum);
    return quorum;
  }

  @Test
  void startingOnAMissingQueueFailsWithTheQueueNamed() {
    RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing",
        "idem-test-missing-" + f.suffix).handler(f.recordEffect()).build();

    assertThatThrownBy(consumer::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("idem-test-missing-" + f.suffix)
        .hasMessageContaining("NOT_FOUND");
    consumer.close();
  }

  @Test
  void startingWithoutABrokerFailsLoudly() {
    ConnectionFactory nowhere = Rabbit.factory();
    nowhere.setPort(1); // nothing listens on 127.0.0.1:1
    RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(nowhere, inbox, "billing", f.queue)
        .handler(f.recordEffect()).build();

    assertThatThrownBy(consumer::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("cannot consume queue '" + f.queue + "'");
  }

  @Test
  void theBuilderRefusesBadConfiguration() {
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue).build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("handler is required");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue).prefetch(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("prefetch must be 1 to 65535, got 0");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "", f.queue))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("consumer must be");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue).maxFailures(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxFailures must be");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue)
        .deadLetterExchange(" ", null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("dead-letter exchange must not be blank");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue)
        .deadLetterExchange("dlx", "k".repeat(256)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 255 UTF-8 bytes");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue)
        .deadLetterTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("deadLetterTimeout must be");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue)
        .deadLetterAttempts(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("deadLetterAttempts must be 1 to 1000");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue)
        .failurePause(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("failurePause must be 1 ms to 1 min");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue)
        .maxFailurePause(Duration.ofHours(2)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxFailurePause must be 1 ms to 1 h");
    assertThatThrownBy(() -> RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue)
        .handler(f.recordEffect()).failurePause(Duration.ofSeconds(2)).maxFailurePause(Duration.ofSeconds(1)).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxFailurePause must not be less than failurePause");
  }
}
