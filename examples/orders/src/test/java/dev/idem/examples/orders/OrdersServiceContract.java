package dev.idem.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.idem.test.Eventually;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The order service end to end, on a random port, on a database of the subclass's and the local RabbitMQ (queues and
 * an exchange of its own, deleted afterwards): an order placed twice, or by 16 racing callers, with one request id is
 * one row and one answer; a payment delivered twice pays the order once and confirms it once on the broker; a payment
 * for an unknown order is dead-lettered after its attempts, leaving nothing. A service that is down fails the test.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class OrdersServiceContract {
  private static final Duration DEADLINE = Duration.ofSeconds(30);
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** This run's own names: queues, exchange, database. */
  protected final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String payments = "idem-orders-payments-" + suffix;
  private final String paymentsDead = payments + ".dead";
  private final String exchange = "idem-orders-events-" + suffix;
  private final String confirmed = "idem-orders-confirmed-" + suffix;

  private Connection rabbit;
  private Channel admin;
  private ConfigurableApplicationContext context;
  private JdbcTemplate db;
  private URI base;
  private ObjectMapper json;

  /** Creates the database the service runs on and returns the arguments that select it. */
  protected abstract List<String> createDatabase();

  /** Drops what {@link #createDatabase} created. */
  protected abstract void dropDatabase();

  static String rabbitUri() {
    return System.getProperty("idem.test.rabbitmq.uri", "amqp://guest:guest@127.0.0.1:5672");
  }

  @BeforeAll
  void start() throws Exception {
    List<String> args = new ArrayList<>(createDatabase());
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(rabbitUri());
    factory.setConnectionTimeout(5_000);
    rabbit = factory.newConnection("idem-orders-test");
    admin = rabbit.createChannel();
    args.addAll(List.of("--server.port=0",
        "--orders.rabbitmq.uri=" + rabbitUri(),
        "--orders.events.exchange=" + exchange,
        "--idem.consumers.payments.rabbitmq.queue=" + payments,
        "--idem.consumers.payments.rabbitmq.max-failures=3",
        "--idem.consumers.payments.rabbitmq.failure-pause=10ms"));
    context = new SpringApplicationBuilder(OrdersApplication.class).run(args.toArray(String[]::new));
    db = context.getBean(JdbcTemplate.class);
    // the service declared its queues and exchange (RabbitTopology); the test listens to what it publishes
    admin.queueDeclare(confirmed, false, false, false, null);
    admin.queueBind(confirmed, exchange, "order.confirmed");
    base = URI.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port"));
    json = context.getBean(ObjectMapper.class);
  }

  @AfterAll
  void stop() throws Exception {
    try {
      if (context != null) {
        context.close();
      }
      if (admin != null) {
        admin.queueDelete(payments);
        admin.queueDelete(paymentsDead);
        admin.queueDelete(confirmed);
        admin.exchangeDelete(exchange);
        rabbit.close();
      }
    } finally {
      dropDatabase();
    }
  }

  @Test
  void placingTwiceWithOneRequestIdPlacesOneOrder() throws Exception {
    String requestId = "req-" + UUID.randomUUID();

    HttpResponse<String> first = place(requestId, "alice", "book", 2);
    HttpResponse<String> second = place(requestId, "alice", "book", 2);

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(second.statusCode()).isEqualTo(201);
    JsonNode order = json.readTree(first.body());
    assertThat(json.readTree(second.body())).isEqualTo(order);
    assertThat(order.get("requestId").asString()).isEqualTo(requestId);
    assertThat(order.get("status").asString()).isEqualTo("PLACED");
    assertThat(count("SELECT COUNT(*) FROM orders WHERE request_id = ?", requestId)).isEqualTo(1);
    HttpResponse<String> found = get("/orders/" + order.get("id").asString());
    assertThat(found.statusCode()).isEqualTo(200);
    assertThat(json.readTree(found.body())).isEqualTo(order);
  }

  @Test
  void sixteenCallersRacingWithOneRequestIdPlaceOneOrder() throws Exception {
    int callers = 16;
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    try {
      for (int round = 0; round < 10; round++) {
        String requestId = "race-" + round + "-" + UUID.randomUUID();
        CountDownLatch go = new CountDownLatch(1);
        List<Future<HttpResponse<String>>> answers = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
          answers.add(pool.submit(() -> {
            go.await();
            return place(requestId, "bob", "lamp", 1);
          }));
        }
        go.countDown();
        Set<String> ids = new HashSet<>();
        for (Future<HttpResponse<String>> answer : answers) {
          HttpResponse<String> response = answer.get(60, TimeUnit.SECONDS);
          assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
          ids.add(json.readTree(response.body()).get("id").asString());
        }
        assertThat(ids).as("round " + round).hasSize(1);
        assertThat(count("SELECT COUNT(*) FROM orders WHERE request_id = ?", requestId))
            .as("round " + round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aRequestIdUsedForAnotherOrderIsRefused() throws Exception {
    String requestId = "req-" + UUID.randomUUID();
    assertThat(place(requestId, "carol", "pen", 1).statusCode()).isEqualTo(201);

    HttpResponse<String> other = place(requestId, "carol", "pen", 5);

    assertThat(other.statusCode()).isEqualTo(422);
    assertThat(count("SELECT COUNT(*) FROM orders WHERE request_id = ?", requestId)).isEqualTo(1);
    assertThat(place("", "carol", "pen", 1).statusCode()).isEqualTo(400);
  }

  @Test
  void aPaymentDeliveredTwicePaysOnceAndConfirmsOnce() throws Exception {
    JsonNode order = json.readTree(place("req-" + UUID.randomUUID(), "dave", "chair", 4).body());
    String orderId = order.get("id").asString();
    String messageId = UUID.randomUUID().toString();
    String paymentId = "pay_" + suffix;
    double duplicatesBefore = counter("idem.consumer.duplicates");
    double processedBefore = counter("idem.consumer.processed");

    publishPayment(messageId, orderId, paymentId);
    publishPayment(messageId, orderId, paymentId); // a redelivery: the same message id again

    GetResponse message = Eventually.await("order.confirmed reached the test's queue", DEADLINE,
        this::nextConfirmed, r -> r != null);
    Eventually.await("the redelivery was acknowledged as a duplicate", DEADLINE,
        () -> counter("idem.consumer.duplicates") - duplicatesBefore, d -> d >= 1);
    // another payment message for the same order: handled, but the order is paid already and nothing is published
    publishPayment(UUID.randomUUID().toString(), orderId, "pay_other_" + suffix);
    Eventually.await("the second payment message was handled", DEADLINE,
        () -> counter("idem.consumer.processed") - processedBefore, d -> d >= 2);
    Eventually.await("the outbox delivered everything", DEADLINE,
        () -> count("SELECT COUNT(*) FROM idem_outbox WHERE status <> 'delivered'"), c -> c == 0);

    assertThat(counter("idem.consumer.duplicates") - duplicatesBefore).isEqualTo(1);
    assertThat(counter("idem.consumer.processed") - processedBefore).isEqualTo(2);
    assertThat(count("SELECT COUNT(*) FROM idem_inbox WHERE consumer = ? AND event_id = ?",
        "payments", messageId)).isEqualTo(1);
    assertThat(count("SELECT COUNT(*) FROM orders WHERE id = ? AND status = 'PAID' AND payment_id = ?",
        orderId, paymentId)).isEqualTo(1);
    assertThat(json.readTree(get("/orders/" + orderId).body()).get("status").asString()).isEqualTo("PAID");
    // one event for the order in the outbox, delivered; one message on the queue
    assertThat(count("SELECT COUNT(*) FROM idem_outbox WHERE event_type = ? AND payload LIKE ?",
        "order.confirmed", "%" + orderId + "%")).isEqualTo(1);
    assertThat(message.getProps().getType()).isEqualTo("order.confirmed");
    // the message id is the outbox event's id, the same on every attempt, for receivers to deduplicate on
    assertThat(count("SELECT COUNT(*) FROM idem_outbox WHERE CAST(id AS VARCHAR(36)) = ? AND event_type = ?",
        message.getProps().getMessageId(), "order.confirmed")).isEqualTo(1);
    JsonNode event = json.readTree(message.getBody());
    assertThat(event.get("orderId").asString()).isEqualTo(orderId);
    assertThat(event.get("paymentId").asString()).isEqualTo(paymentId);
    assertThat(event.get("customer").asString()).isEqualTo("dave");
    assertThat(event.get("sku").asString()).isEqualTo("chair");
    assertThat(event.get("quantity").asInt()).isEqualTo(4);
    assertThat(nextConfirmed()).as("a second order.confirmed").isNull();
  }

  @Test
  void aPaymentForAnUnknownOrderIsDeadLetteredAndLeavesNothing() throws Exception {
    String messageId = UUID.randomUUID().toString();
    String orderId = UUID.randomUUID().toString();

    publishPayment(messageId, orderId, "pay_lost_" + suffix);

    Eventually.await("the payment reached the dead-letter queue", DEADLINE, () -> messageCount(paymentsDead),
        c -> c == 1);
    GetResponse dead = admin.basicGet(paymentsDead, true);
    assertThat(dead.getProps().getMessageId()).isEqualTo(messageId);
    // each of the three attempts rolled back with its inbox row: the id is not recorded, no event was written
    assertThat(count("SELECT COUNT(*) FROM idem_inbox WHERE event_id = ?", messageId)).isZero();
    assertThat(count("SELECT COUNT(*) FROM idem_outbox WHERE payload LIKE ?", "%" + orderId + "%"))
        .isZero();
  }

  private HttpResponse<String> place(String requestId, String customer, String sku, int quantity)
      throws IOException, InterruptedException {
    String body = json.writeValueAsString(Map.of("requestId", requestId, "customer", customer, "sku", sku,
        "quantity", quantity));
    HttpRequest request = HttpRequest.newBuilder(base.resolve("/orders")).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).GET().build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private void publishPayment(String messageId, String orderId, String paymentId) throws IOException {
    AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(messageId).type("payment.succeeded")
        .contentType("application/json").deliveryMode(2).build();
    byte[] body = json.writeValueAsString(Map.of("orderId", orderId, "paymentId", paymentId))
        .getBytes(StandardCharsets.UTF_8);
    admin.basicPublish("", payments, props, body);
  }

  private GetResponse nextConfirmed() {
    try {
      return admin.basicGet(confirmed, true);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private long messageCount(String queue) {
    try {
      return admin.messageCount(queue);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private double counter(String name) {
    Counter c = context.getBean(MeterRegistry.class).find(name).tag("consumer", "payments").counter();
    return c == null ? 0 : c.count();
  }

  /** A count over the service's own database, through its data source. */
  private long count(String sql, Object... args) {
    return db.queryForObject(sql, Long.class, args);
  }
}
