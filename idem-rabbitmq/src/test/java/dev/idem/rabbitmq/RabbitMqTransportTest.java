package dev.idem.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStatus;
import dev.idem.test.TestPostgres;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The outbox transport on the real RabbitMQ: confirms, message properties, failures as retries. */
class RabbitMqTransportTest {
  private RabbitFixture f;
  private RabbitMqTransport transport;

  @BeforeEach
  void setUp() throws Exception {
    f = new RabbitFixture();
    transport = RabbitMqTransport.builder(Rabbit.factory()).name("transport-test").build();
  }

  @AfterEach
  void tearDown() throws Exception {
    transport.close();
    f.close();
  }

  @Test
  void aConfirmedMessageCarriesTheEventIdTypeAndHeadersAndIsPersistent() throws Exception {
    OutboxMessage m = f.message(f.toExchange());

    DeliveryResult result = transport.send(m);

    assertThat(result.isDelivered()).isTrue();
    GetResponse got = f.admin.basicGet(f.queue, true);
    assertThat(got).isNotNull();
    assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo(m.payload());
    assertThat(got.getProps().getMessageId()).isEqualTo(m.id().toString());
    assertThat(got.getProps().getType()).isEqualTo("order.placed");
    assertThat(got.getProps().getContentType()).isEqualTo("application/json");
    assertThat(got.getProps().getDeliveryMode()).isEqualTo(2);
    assertThat(got.getProps().getTimestamp()).isNotNull();
    assertThat(got.getProps().getHeaders()).extractingByKeys("tenant", "aggregate-type", "aggregate-id")
        .extracting(String::valueOf).containsExactly("t-1", "order", m.aggregateId());
  }

  @Test
  void anEmptyExchangePublishesStraightToTheQueueNamedByTheRoutingKey() throws Exception {
    DeliveryResult result = transport.send(f.message("rabbitmq:/" + f.queue));

    assertThat(result.isDelivered()).isTrue();
    assertThat(f.ready(f.queue)).isEqualTo(1);
  }

  @Test
  void destinationsResolveToExchangeAndRoutingKeyWithTheEventTypeAsDefaultKey() {
    assertThat(RabbitMqTransport.resolve("payments/paid", "t", null))
        .isEqualTo(new RabbitMqTransport.Target("payments", "paid"));
    assertThat(RabbitMqTransport.resolve("payments", "t", null))
        .isEqualTo(new RabbitMqTransport.Target("payments", "t"));
    assertThat(RabbitMqTransport.resolve("payments/", "t", null))
        .isEqualTo(new RabbitMqTransport.Target("payments", "t"));
    assertThat(RabbitMqTransport.resolve("/q1", "t", null)).isEqualTo(new RabbitMqTransport.Target("", "q1"));
    assertThat(RabbitMqTransport.resolve("x/a/b", "t", null)).isEqualTo(new RabbitMqTransport.Target("x", "a/b"));
    assertThat(RabbitMqTransport.resolve("", "t", "fallback")).isEqualTo(new RabbitMqTransport.Target("fallback", "t"));
    assertThat(RabbitMqTransport.resolve("", "t", null)).isNull();
  }

  @Test
  void aBareRouteUsesTheDefaultExchangeOrIsDeadWithoutOne() throws Exception {
    OutboxMessage bare = new OutboxMessage(UUID.randomUUID(), "events", "order", "o-1", "{}", Map.of(),
        "rabbitmq", 1, java.time.Instant.now());
    try (RabbitMqTransport withDefault = RabbitMqTransport.builder(Rabbit.factory()).defaultExchange(f.exchange)
        .build()) {

      DeliveryResult withoutDefault = transport.send(bare);
      DeliveryResult routed = withDefault.send(bare);

      assertThat(withoutDefault.kind()).isEqualTo(DeliveryResult.Kind.PERMANENT);
      assertThat(withoutDefault.error()).get().asString().contains("names no exchange");
      assertThat(routed.isDelivered()).isTrue();
      assertThat(f.ready(f.queue)).isEqualTo(1);
    }
  }

  @Test
  void aMissingExchangeIsARetryAndTheTransportCarriesOnOnAFreshChannel() throws Exception {
    OutboxMessage lost = f.message("rabbitmq:idem-test-no-such-exchange-" + f.suffix + "/events");
    OutboxMessage fine = f.message(f.toExchange());

    DeliveryResult failed = transport.send(lost);
    DeliveryResult next = transport.send(fine);

    assertThat(failed.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
    assertThat(failed.error()).get().asString().contains("NOT_FOUND").contains("idem-test-no-such-exchange-");
    assertThat(next.isDelivered()).isTrue();
    assertThat(f.ready(f.queue)).isEqualTo(1);
  }

  @Test
  void anUnroutableMessageIsARetryNotADelivery() throws Exception {
    OutboxMessage unroutable = f.message("rabbitmq:" + f.exchange + "/no-queue-bound");

    DeliveryResult result = transport.send(unroutable);

    assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
    assertThat(result.error()).get().asString().contains("unroutable").contains("NO_ROUTE").contains("no-queue-bound");
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void aMessageTheBrokerNacksIsARetry() throws Exception {
    // a full queue that refuses new messages makes RabbitMQ nack them
    String full = "idem-test-full-" + f.suffix;
    f.admin.queueDeclare(full, false, false, true, Map.of("x-max-length", 1, "x-overflow", "reject-publish"));
    try {

      List<DeliveryResult> results = transport.sendAll(List.of(f.message("rabbitmq:/" + full),
          f.message("rabbitmq:/" + full)));

      assertThat(results).extracting(DeliveryResult::kind).containsExactly(DeliveryResult.Kind.DELIVERED,
          DeliveryResult.Kind.RETRY);
      assertThat(results.get(1).error()).get().asString().contains("nacked");
      assertThat(f.ready(full)).isEqualTo(1);
    } finally {
      f.admin.queueDelete(full);
    }
  }

  @Test
  void aBatchGetsOneResultPerMessageInOrder() {
    List<OutboxMessage> batch = List.of(f.message(f.toExchange()), f.message("rabbitmq:" + f.exchange + "/nowhere"),
        f.message(f.toExchange()), f.message("rabbitmq:/" + f.queue));

    List<DeliveryResult> results = transport.sendAll(batch);

    assertThat(results).extracting(DeliveryResult::kind).containsExactly(DeliveryResult.Kind.DELIVERED,
        DeliveryResult.Kind.RETRY, DeliveryResult.Kind.DELIVERED, DeliveryResult.Kind.DELIVERED);
    assertThat(f.ready(f.queue)).isEqualTo(3);
  }

  @Test
  void aRoutingKeyLongerThanAmqpAllowsIsPermanentAndTheRestOfTheBatchIsDelivered() throws Exception {
    OutboxMessage before = f.message(f.toExchange());
    OutboxMessage tooLong = f.message("rabbitmq:" + f.exchange + "/" + "k".repeat(300));
    OutboxMessage after = f.message(f.toExchange());

    List<DeliveryResult> results = transport.sendAll(List.of(before, tooLong, after));

    assertThat(results).extracting(DeliveryResult::kind).containsExactly(DeliveryResult.Kind.DELIVERED,
        DeliveryResult.Kind.PERMANENT, DeliveryResult.Kind.DELIVERED);
    assertThat(results.get(1).error()).get().asString().contains("routing key").contains("255");
    assertThat(f.ready(f.queue)).isEqualTo(2);
    GetResponse first = f.admin.basicGet(f.queue, true);
    GetResponse second = f.admin.basicGet(f.queue, true);
    assertThat(List.of(first.getProps().getMessageId(), second.getProps().getMessageId()))
        .containsExactly(before.id().toString(), after.id().toString());
    // the channel is still sound: the next batch is confirmed and credited correctly
    assertThat(transport.sendAll(List.of(f.message(f.toExchange())))).extracting(DeliveryResult::kind)
        .containsExactly(DeliveryResult.Kind.DELIVERED);
  }

  @Test
  void aBrokerThatNeverAnswersTheHandshakeIsARetryWithinTheConfirmTimeout() throws Exception {
    // something listens but never speaks AMQP: without the bound the handshake alone waits 10 s
    try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      ConnectionFactory factory = Rabbit.factory();
      factory.setPort(silent.getLocalPort());
      factory.setHandshakeTimeout(60_000);
      try (RabbitMqTransport bounded = RabbitMqTransport.builder(factory).name("bounded")
          .confirmTimeout(Duration.ofSeconds(1)).build()) {
        long started = System.nanoTime();

        DeliveryResult result = bounded.send(f.message(f.toExchange()));

        long tookMillis = (System.nanoTime() - started) / 1_000_000;
        assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
        assertThat(tookMillis).isLessThan(5_000);
      }
    }
  }

  @Test
  void theRelayKeepsAnUnroutableEventPendingWithTheAttemptRecorded() throws Exception {
    Outbox outbox = f.outbox();
    UUID id;
    try (java.sql.Connection c = TestPostgres.postgres().getConnection()) {
      c.setAutoCommit(false);
      id = outbox.enqueue(JdbcTransaction.of(c), OutboxEvent.builder("order.placed").aggregate("order", "o-1")
          .payload("{}")
          .destination("rabbitmq:" + f.exchange + "/no-queue-bound").build());
      c.commit();
    }
    OutboxRelay relay = OutboxRelay.builder(outbox).route("rabbitmq", transport).build();

    int claimed = relay.runOnce();

    assertThat(claimed).isEqualTo(1);
    OutboxEntry entry = outbox.find(id).orElseThrow();
    assertThat(entry.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(entry.attempts()).isEqualTo(1);
    assertThat(entry.lastError()).contains("unroutable");
    assertThat(entry.history()).hasSize(1);
    assertThat(outbox.stats().count(OutboxStatus.DELIVERED)).isZero();
  }

  @Test
  void afterALostConnectionTheNextSendReconnects() throws Exception {
    CapturingFactory factory = Rabbit.configure(new CapturingFactory());
    try (RabbitMqTransport own = RabbitMqTransport.builder(factory).name("reconnecting").build()) {
      assertThat(own.send(f.message(f.toExchange())).isDelivered()).isTrue();
      assertThat(factory.opened).hasSize(1);

      factory.opened.get(0).abort(); // the broker or the network drops the connection

      DeliveryResult afterLoss = own.send(f.message(f.toExchange()));
      assertThat(afterLoss.isDelivered()).isTrue();
      assertThat(factory.opened).hasSize(2);
      assertThat(factory.opened.get(0).isOpen()).isFalse();
      assertThat(f.ready(f.queue)).isEqualTo(2);
    }
    assertThat(factory.opened.get(1).isOpen()).isFalse(); // closed with the transport
  }

  @Test
  void anUnreachableBrokerIsARetry() {
    ConnectionFactory nowhere = Rabbit.factory();
    nowhere.setPort(1); // nothing listens on 127.0.0.1:1
    try (RabbitMqTransport unreachable = RabbitMqTransport.builder(nowhere).name("nowhere").build()) {

      DeliveryResult result = unreachable.send(f.message(f.toExchange()));

      assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
      assertThat(result.error()).get().asString().contains("transport nowhere cannot open a RabbitMQ channel");
    }
  }

  @Test
  void aClosedTransportRetriesInsteadOfSending() {
    transport.close();

    DeliveryResult result = transport.send(f.message(f.toExchange()));

    assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
    assertThat(f.ready(f.queue)).isZero();
  }

  @Test
  void theBuilderRefusesBadConfiguration() {
    assertThatThrownBy(() -> RabbitMqTransport.builder(Rabbit.factory()).confirmTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("confirmTimeout must be > 0");
    assertThatThrownBy(() -> RabbitMqTransport.builder(Rabbit.factory()).maxIdleChannels(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxIdleChannels must be 0 to 256, got -1");
  }

  /** Keeps the connections it opens, so that a test can drop one. */
  static final class CapturingFactory extends ConnectionFactory {
    final List<Connection> opened = new CopyOnWriteArrayList<>();

    @Override
    public Connection newConnection(String clientProvidedName) throws IOException, TimeoutException {
      Connection c = super.newConnection(clientProvidedName);
      opened.add(c);
      return c;
    }
  }
}
