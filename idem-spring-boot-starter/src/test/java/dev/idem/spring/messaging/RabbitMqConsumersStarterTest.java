package dev.idem.spring.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.idem.rabbitmq.RabbitMqInboxConsumer;
import dev.idem.test.Eventually;
import dev.idem.test.TcpProxy;
import dev.idem.test.TestPostgres;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application whose RabbitMQ inbox consumer comes from properties alone, on the local RabbitMQ and
 * PostgreSQL, each test with a queue (dead-lettered to a second queue) and tables of its own: each message id takes
 * effect once however often it is delivered, a poison message is dead-lettered after its attempts, the meters count
 * both, and stopping the context waits for the message in hand.
 */
class RabbitMqConsumersStarterTest {
  private static final Duration DEADLINE = Duration.ofSeconds(30);

  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String effects = "cst_rmq_fx_" + suffix;
  private final String queue = "idem-starter-q-" + suffix;
  private final String deadLetters = "idem-starter-dlq-" + suffix;
  private Connection rabbit;
  private Channel admin;
  private ConfigurableApplicationContext context;

  static String uri() {
    return System.getProperty("idem.test.rabbitmq.uri", "amqp://guest:guest@127.0.0.1:5672");
  }

  @BeforeEach
  void setUp() throws Exception {
    TestPostgres.createEffectTable(effects);
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(uri());
    factory.setConnectionTimeout(5_000);
    rabbit = factory.newConnection("idem-starter-test");
    admin = rabbit.createChannel();
    admin.queueDeclare(deadLetters, false, false, false, null);
    admin.queueDeclare(queue, true, false, false,
        Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", deadLetters));
  }

  @AfterEach
  void tearDown() throws IOException, TimeoutException {
    try {
      if (context != null) {
        context.close();
      }
      admin.queueDelete(queue);
      admin.queueDelete(deadLetters);
      rabbit.close();
    } finally {
      ConsumersApp.dropTables("cst_rmq_" + suffix, effects);
    }
  }

  private ConfigurableApplicationContext start() {
    return start("recordEffect");
  }

  private ConfigurableApplicationContext start(String handler) {
    return start(TestPostgres.url(), handler);
  }

  private ConfigurableApplicationContext start(String jdbcUrl, String handler, String... more) {
    List<String> properties = new ArrayList<>(List.of("spring.datasource.hikari.connection-timeout=1000",
        "idem.consumers.rabbitmq.uri=" + uri(),
        "idem.consumers.shipping.handler=" + handler,
        "idem.consumers.shipping.rabbitmq.queue=" + queue,
        "idem.consumers.shipping.rabbitmq.channels=2",
        "idem.consumers.shipping.rabbitmq.prefetch=10",
        "idem.consumers.shipping.rabbitmq.max-failures=3",
        "idem.consumers.shipping.rabbitmq.failure-pause=10ms"));
    properties.addAll(List.of(more));
    return ConsumersApp.runOnPostgresAt(jdbcUrl, "cst_rmq_" + suffix, effects, properties.toArray(String[]::new));
  }

  private void publish(String messageId, String body) throws IOException {
    AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(messageId).deliveryMode(2).build();
    admin.basicPublish("", queue, props, body.getBytes(StandardCharsets.UTF_8));
  }

  private double counter(String name, String... tags) {
    Counter c = context.getBean(MeterRegistry.class).find(name).tag("consumer", "shipping").tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void eachMessageIdTakesEffectOnceAndAPoisonMessageIsDeadLettered() throws IOException {
    context = start();
    int n = 40;
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = UUID.randomUUID().toString();
      ids.add(id);
      publish(id, "order " + i);
      publish(id, "order " + i); // a redelivery: the same message id again
    }
    String poison = UUID.randomUUID().toString();
    publish(poison, "poison");

    Eventually.await("every id took effect", DEADLINE, () -> TestPostgres.effectCount(effects), c -> c >= n);
    Eventually.await("the poison message reached the dead-letter queue", DEADLINE,
        () -> messageCount(deadLetters), c -> c == 1);
    Eventually.await("every duplicate was acknowledged", DEADLINE, () -> counter("idem.consumer.duplicates"),
        c -> c >= n);
    // a message's effect is visible once it commits, and it is counted once the broker is answered, just after
    Eventually.await("every message counted", DEADLINE, () -> counter("idem.consumer.processed"), c -> c >= n);

    assertThat(TestPostgres.effectCount(effects)).isEqualTo(n);
    assertThat(TestPostgres.eventsWithSeveralEffects(effects)).isZero();
    assertThat(TestPostgres.effectIds(effects)).containsExactlyInAnyOrderElementsOf(ids);
    GetResponse dead = admin.basicGet(deadLetters, true);
    assertThat(dead.getProps().getMessageId()).isEqualTo(poison);
    assertThat(TestPostgres.effectCount(effects, poison)).isZero();

    assertThat(counter("idem.consumer.processed")).isEqualTo(n);
    assertThat(counter("idem.consumer.duplicates")).isEqualTo(n);
    assertThat(counter("idem.consumer.dead.lettered", "reason", "handler_failed")).isEqualTo(1);
    // the first two of the poison message's three failures were retried, the third dead-lettered it
    assertThat(counter("idem.consumer.failures", "reason", "handler_failed")).isEqualTo(2);
    assertThat(counter("idem.consumer.paused")).isZero();
    assertThat(messageCount(queue)).isZero();
    // a ConsumerListener bean of the application hears of it too
    assertThat(context.getBean(ConsumersApp.DeadLetters.class).ids).containsExactly("shipping:" + poison);
  }

  @Test
  void withADeadLetterExchangeAPoisonMessageIsRepublishedThereWithItsAttemptHistory() throws IOException {
    String exchange = "idem-starter-dlx-" + suffix;
    String idemDeadLetters = "idem-starter-idem-dlq-" + suffix;
    admin.exchangeDeclare(exchange, BuiltinExchangeType.DIRECT, false, false, null);
    admin.queueDeclare(idemDeadLetters, false, false, false, null);
    admin.queueBind(idemDeadLetters, exchange, "poisoned");
    try {
      context = start(TestPostgres.url(), "recordEffect",
          "idem.consumers.shipping.rabbitmq.dead-letter-exchange=" + exchange,
          "idem.consumers.shipping.rabbitmq.dead-letter-routing-key=poisoned");
      String poison = UUID.randomUUID().toString();
      publish(poison, "poison");

      Eventually.await("the poison message republished", DEADLINE, () -> messageCount(idemDeadLetters),
          c -> c == 1);
      Eventually.await("the poison message counted", DEADLINE,
          () -> counter("idem.consumer.dead.lettered", "reason", "handler_failed"), c -> c == 1);
      context.close(); // a message left unacknowledged would be back on the queue now
      context = null;

      assertThat(messageCount(queue)).isZero();
      assertThat(messageCount(deadLetters)).as("the queue's own dead-letter queue").isZero();
      GetResponse dead = admin.basicGet(idemDeadLetters, true);
      Map<String, Object> headers = dead.getProps().getHeaders();
      assertThat(dead.getProps().getMessageId()).isEqualTo(poison);
      assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("poison");
      assertThat(dead.getProps().getDeliveryMode()).isEqualTo(2);
      assertThat(headers.get("idem-dlt-reason")).hasToString("handler_failed");
      assertThat(headers.get("idem-dlt-consumer")).hasToString("shipping");
      assertThat(headers.get("idem-dlt-queue")).hasToString(queue);
      assertThat(headers.get("idem-dlt-attempts")).hasToString("3");
      for (int i = 1; i <= 3; i++) {
        assertThat(headers.get("idem-dlt-attempt-" + i).toString())
            .contains("PoisonException: poison message " + poison);
      }
      assertThat(headers).doesNotContainKey("idem-dlt-attempt-4");
      assertThat(TestPostgres.effectCount(effects, poison)).isZero();
    } finally {
      admin.queueDelete(idemDeadLetters);
      admin.exchangeDelete(exchange);
    }
  }

  @Test
  void aDeadLetterRoutingKeyWithoutExchangeStopsTheStart() {
    assertThatThrownBy(() -> start(TestPostgres.url(), "recordEffect",
        "idem.consumers.shipping.rabbitmq.dead-letter-routing-key=poisoned"))
        .hasStackTraceContaining("idem.consumers.shipping.rabbitmq.dead-letter-routing-key is set but"
            + " idem.consumers.shipping.rabbitmq.dead-letter-exchange is not");
    assertThatThrownBy(() -> start(TestPostgres.url(), "recordEffect",
        "idem.consumers.shipping.rabbitmq.dead-letter-exchange="))
        .hasStackTraceContaining("idem.consumers.shipping.rabbitmq.dead-letter-exchange: the dead-letter exchange"
            + " must not be blank");
    assertThatThrownBy(() -> start(TestPostgres.url(), "recordEffect",
        "idem.consumers.shipping.rabbitmq.dead-letter-exchange=idem-starter-missing-x-" + suffix,
        "idem.consumers.shipping.rabbitmq.dead-letter-attempts=0"))
        .hasStackTraceContaining("idem.consumers.shipping.rabbitmq.dead-letter-attempts")
        .hasStackTraceContaining("deadLetterAttempts must be 1 to 1000, got 0");
  }

  @Test
  void aDeadLetterExchangeThatDoesNotExistStopsTheStartWithTheExchangeNamed() {
    assertThatThrownBy(() -> start(TestPostgres.url(), "recordEffect",
        "idem.consumers.shipping.rabbitmq.dead-letter-exchange=idem-starter-missing-x-" + suffix))
        .hasStackTraceContaining("the dead-letter exchange 'idem-starter-missing-x-" + suffix + "' cannot be used")
        .hasStackTraceContaining("NOT_FOUND");
  }

  @Test
  void stoppingTheContextWaitsForTheMessageInHand() throws Exception {
    ConsumersApp.entered = new CountDownLatch(1);
    ConsumersApp.gate = new CountDownLatch(1);
    context = start();
    String id = UUID.randomUUID().toString();
    publish(id, "gate");
    assertThat(ConsumersApp.entered.await(30, TimeUnit.SECONDS)).isTrue();

    ConfigurableApplicationContext closing = context;
    RabbitMqInboxConsumer consumer = (RabbitMqInboxConsumer) closing.getBean(InboxConsumerLifecycle.class)
        .consumer().orElseThrow();
    Thread closer = new Thread(closing::close, "closer");
    closer.start();
    // the consumer is closing (it takes no more messages) while the handler still holds one
    Eventually.await("the consumer is closing", DEADLINE, consumer::isRunning, running -> !running);
    assertThat(closer.isAlive()).isTrue();
    ConsumersApp.gate.countDown();
    closer.join(30_000);

    assertThat(closer.isAlive()).isFalse();
    assertThat(closing.isActive()).isFalse();
    // the message in hand committed and was acknowledged before the channel closed: nothing is left to redeliver
    assertThat(TestPostgres.effectCount(effects, id)).isEqualTo(1);
    assertThat(messageCount(queue)).isZero();
  }

  @Test
  void aStoppedContextStopsItsConsumerAndAStartedOneRunsItAgain() throws IOException {
    context = start();
    InboxConsumerLifecycle lifecycle = context.getBean("idemConsumer.shipping", InboxConsumerLifecycle.class);
    assertThat(lifecycle.broker()).isEqualTo("rabbitmq");
    assertThat(lifecycle.consumer()).get().isInstanceOf(RabbitMqInboxConsumer.class);
    Eventually.await("the queue has its consumer's channels", DEADLINE, () -> consumerCount(queue), c -> c == 2);

    context.stop();
    assertThat(lifecycle.isRunning()).isFalse();
    assertThat(consumerCount(queue)).isZero();
    String id = UUID.randomUUID().toString();
    publish(id, "while stopped");
    Eventually.await("the message waits in the queue", DEADLINE, () -> messageCount(queue), c -> c == 1);

    context.start();
    Eventually.await("the message sent while stopped took effect", DEADLINE,
        () -> TestPostgres.effectCount(effects, id), c -> c == 1);
    assertThat(((RabbitMqInboxConsumer) lifecycle.consumer().orElseThrow()).isRunning()).isTrue();
  }

  @Test
  void aJdbcTemplateInTheHandlerWritesInTheInboxTransaction() throws IOException {
    handlerWritesRollBackWithTheInboxTransaction("recordWithJdbcTemplate");
  }

  @Test
  void aTransactionalServiceInTheHandlerJoinsTheInboxTransaction() throws IOException {
    handlerWritesRollBackWithTheInboxTransaction("bookThroughService");
  }

  @Test
  void theFirstDeliveryOrderPropertyRunsTheHandlerBeforeTheInboxRowAndCopiesStayDuplicates() throws IOException {
    context = start(TestPostgres.url(), "recordInboxOrder",
        "idem.consumers.shipping.rabbitmq.first-delivery-order=true");
    String fresh = UUID.randomUUID().toString();
    publish(fresh, "order");
    Eventually.await("the message took effect", DEADLINE, () -> TestPostgres.effectCount(effects), c -> c == 1);
    // the handler ran before the inbox row was written: the first-delivery order
    assertThat(TestPostgres.effectIds(effects)).containsExactly("first:" + fresh);

    publish(fresh, "order"); // a producer's copy: not redelivered by the broker, so it is tried in that order too
    Eventually.await("the copy was acknowledged as a duplicate", DEADLINE, () -> counter("idem.consumer.duplicates"),
        c -> c == 1);
    assertThat(TestPostgres.effectIds(effects)).containsExactly("first:" + fresh);
    context.close();

    context = start(TestPostgres.url(), "recordInboxOrder"); // without the property: the rows first
    String next = UUID.randomUUID().toString();
    publish(next, "order");
    Eventually.await("the next message took effect", DEADLINE, () -> TestPostgres.effectCount(effects), c -> c == 2);
    assertThat(TestPostgres.effectIds(effects)).containsExactlyInAnyOrder("first:" + fresh, "recorded:" + next);
  }

  private void handlerWritesRollBackWithTheInboxTransaction(String handler) throws IOException {
    context = start(handler);
    String id = UUID.randomUUID().toString();
    publish(id, "order");
    publish(id, "order");
    String poison = UUID.randomUUID().toString();
    publish(poison, "poison");

    Eventually.await("the poison message reached the dead-letter queue", DEADLINE,
        () -> messageCount(deadLetters), c -> c == 1);
    Eventually.await("the duplicate was acknowledged", DEADLINE, () -> counter("idem.consumer.duplicates"),
        c -> c == 1);
    assertThat(TestPostgres.effectCount(effects, id)).isEqualTo(1);
    // the handler wrote its row before each of its three failures: each write rolled back with the inbox transaction
    assertThat(TestPostgres.effectCount(effects, poison)).isZero();
    assertThat(counter("idem.consumer.dead.lettered", "reason", "handler_failed")).isEqualTo(1);
  }

  @Test
  void whileTheDatabaseIsAwayTheConsumerPausesAndCountsNothingAgainstTheMessages() throws Exception {
    URI postgres = URI.create(TestPostgres.url().substring("jdbc:".length()));
    try (TcpProxy proxy = new TcpProxy(postgres.getHost(), postgres.getPort())) {
      context = start("jdbc:postgresql://127.0.0.1:" + proxy.port() + postgres.getPath(), "recordEffect");
      String before = UUID.randomUUID().toString();
      publish(before, "before");
      Eventually.await("the first message took effect", DEADLINE, () -> TestPostgres.effectCount(effects, before),
          c -> c == 1);

      proxy.stop();
      List<String> during = List.of(UUID.randomUUID().toString(), UUID.randomUUID().toString());
      for (String id : during) {
        publish(id, "during");
      }
      // more pauses than the 3 failures after which a failing message is dead-lettered
      Eventually.await("the consumer paused again and again", DEADLINE, () -> counter("idem.consumer.paused"),
          c -> c >= 6);
      assertThat(TestPostgres.effectCount(effects)).isEqualTo(1);
      proxy.start();

      for (String id : during) {
        Eventually.await(id + " took effect once the database was back", DEADLINE,
            () -> TestPostgres.effectCount(effects, id), c -> c == 1);
      }
    }
    // a message's effect is visible once it commits, and it is counted once the broker is answered, just after
    Eventually.await("every message counted", DEADLINE, () -> counter("idem.consumer.processed"), c -> c >= 3);
    assertThat(TestPostgres.effectCount(effects)).isEqualTo(3);
    assertThat(counter("idem.consumer.processed")).isEqualTo(3);
    assertThat(counter("idem.consumer.failures", "reason", "handler_failed")).isZero();
    assertThat(counter("idem.consumer.dead.lettered", "reason", "handler_failed")).isZero();
    assertThat(messageCount(deadLetters)).isZero();
  }

  @Test
  void aQueueThatDoesNotExistStopsTheStart() throws IOException {
    admin.queueDelete(queue);
    assertThatThrownBy(this::start).satisfies(e -> {
      StringBuilder messages = new StringBuilder();
      for (Throwable c = e; c != null; c = c.getCause()) {
        messages.append(c.getMessage()).append('\n');
      }
      assertThat(messages.toString()).contains("idem.consumers.shipping.rabbitmq.queue: ").contains(queue);
    });
  }

  private long messageCount(String name) {
    try {
      return admin.messageCount(name);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private long consumerCount(String name) {
    try {
      return admin.consumerCount(name);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
