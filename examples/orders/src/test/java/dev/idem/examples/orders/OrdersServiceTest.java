package dev.idem.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
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
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The order service end to end, on a random port, on the local PostgreSQL (a schema of its own, dropped afterwards)
 * and the local RabbitMQ (queues and an exchange of its own, deleted afterwards): an order placed twice, or by 16
 * racing callers, with one request id is one row and one answer; a payment delivered twice pays the order once and
 * confirms it once on the broker; a payment for an unknown order is dead-lettered after its attempts, leaving nothing.
 * A service that is down fails the test.
 */
class OrdersServiceTest {
  private static final Duration DEADLINE = Duration.ofSeconds(30);
  private static final String SUFFIX = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private static final String SCHEMA = "orders_test_" + SUFFIX;
  private static final String PAYMENTS = "idem-orders-payments-" + SUFFIX;
  private static final String PAYMENTS_DEAD = "idem-orders-payments-dlq-" + SUFFIX;
  private static final String EXCHANGE = "idem-orders-events-" + SUFFIX;
  private static final String CONFIRMED = "idem-orders-confirmed-" + SUFFIX;

  private static Connection rabbit;
  private static Channel admin;
  private static ConfigurableApplicationContext context;
  private static URI base;
  private static ObjectMapper json;
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  static String rabbitUri() {
    return System.getProperty("idem.test.rabbitmq.uri", "amqp://guest:guest@127.0.0.1:5672");
  }

  @BeforeAll
  static void start() throws Exception {
    TestPostgres.execute("CREATE SCHEMA " + SCHEMA);
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(rabbitUri());
    factory.setConnectionTimeout(5_000);
    rabbit = factory.newConnection("idem-orders-test");
    admin = rabbit.createChannel();
    admin.queueDeclare(PAYMENTS_DEAD, false, false, false, null);
    admin.queueDeclare(PAYMENTS, true, false, false,
        Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", PAYMENTS_DEAD));
    admin.exchangeDeclare(EXCHANGE, "direct", false);
    admin.queueDeclare(CONFIRMED, false, false, false, null);
    admin.queueBind(CONFIRMED, EXCHANGE, "order.confirmed");

    String url = TestPostgres.url();
    context = new SpringApplicationBuilder(OrdersApplication.class).run(
        "--server.port=0",
        "--spring.datasource.url=" + url + (url.contains("?") ? "&" : "?") + "currentSchema=" + SCHEMA,
        "--spring.datasource.username=" + TestPostgres.user(),
        "--spring.datasource.password=",
        "--orders.rabbitmq.uri=" + rabbitUri(),
        "--orders.events.exchange=" + EXCHANGE,
        "--idem.consumers.payments.rabbitmq.queue=" + PAYMENTS,
        "--idem.consumers.payments.rabbitmq.max-failures=3",
        "--idem.consumers.payments.rabbitmq.failure-pause=10ms");
    base = URI.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port"));
    json = context.getBean(ObjectMapper.class);
  }

  @AfterAll
  static void stop() throws Exception {
    try {
      if (context != null) {
        context.close();
      }
      if (admin != null) {
        admin.queueDelete(PAYMENTS);
        admin.queueDelete(PAYMENTS_DEAD);
        admin.queueDelete(CONFIRMED);
        admin.exchangeDelete(EXCHANGE);
        rabbit.close();
      }
    } finally {
      TestPostgres.execute("DROP SCHEMA IF EXISTS " + SCHEMA + " CASCADE");
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
    assertThat(count("SELECT COUNT(*) FROM " + SCHEMA + ".orders WHERE request_id = ?", requestId)).isEqualTo(1);
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
        assertThat(count("SELECT COUNT(*) FROM " + SCHEMA + ".orders WHERE request_id = ?", requestId))
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
    assertThat(count("SELECT COUNT(*) FROM " + SCHEMA + ".orders WHERE request_id = ?", requestId)).isEqualTo(1);
    assertThat(place("", "carol", "pen", 1).statusCode()).isEqualTo(400);
  }

  @Test
  void aPaymentDeliveredTwicePaysOnceAndConfirmsOnce() throws Exception {
    JsonNode order = json.readTree(place("req-" + UUID.randomUUID(), "dave", "chair", 4).body());
    String orderId = order.get("id").asString();
    String messageId = UUID.randomUUID().toString();
    String paymentId = "pay_" + SUFFIX;
    double duplicatesBefore = counter("idem.consumer.duplicates");
    double processedBefore = counter("idem.consumer.processed");

    publishPayment(messageId, orderId, paymentId);
    publishPayment(messageId, orderId, paymentId); // a redelivery: the same message id again

    GetResponse confirmed = Eventually.await("order.confirmed reached the test's queue", DEADLINE,
        OrdersServiceTest::nextConfirmed, r -> r != null);
    Eventually.await("the redelivery was acknowledged as a duplicate", DEADLINE,
        () -> counter("idem.consumer.duplicates") - duplicatesBefore, d -> d >= 1);
    // another payment message for the same order: handled, but the order is paid already and nothing is published
    publishPayment(UUID.randomUUID().toString(), orderId, "pay_other_" + SUFFIX);
    Eventually.await("the second payment message was handled", DEADLINE,
        () -> counter("idem.consumer.processed") - processedBefore, d -> d >= 2);
    Eventually.await("the outbox delivered everything", DEADLINE,
        () -> count("SELECT COUNT(*) FROM " + SCHEMA + ".idem_outbox WHERE status <> 'delivered'"), c -> c == 0);

    assertThat(counter("idem.consumer.duplicates") - duplicatesBefore).isEqualTo(1);
    assertThat(counter("idem.consumer.processed") - processedBefore).isEqualTo(2);
    assertThat(count("SELECT COUNT(*) FROM " + SCHEMA + ".idem_inbox WHERE consumer = ? AND event_id = ?",
        "payments", messageId)).isEqualTo(1);
    assertThat(count("SELECT COUNT(*) FROM " + SCHEMA + ".orders WHERE id = ? AND status = 'PAID' AND payment_id = ?",
        orderId, paymentId)).isEqualTo(1);
    assertThat(json.readTree(get("/orders/" + orderId).body()).get("status").asString()).isEqualTo("PAID");
    // one event for the order in the outbox, delivered; one message on the queue
    assertThat(count("SELECT COUNT(*) FROM " + SCHEMA + ".idem_outbox WHERE event_type = ? AND payload LIKE ?",
        "order.confirmed", "%" + orderId + "%")).isEqualTo(1);
    assertThat(confirmed.getProps().getType()).isEqualTo("order.confirmed");
    assertThat(confirmed.getProps().getMessageId()).isNotBlank();
    JsonNode event = json.readTree(confirmed.getBody());
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

    publishPayment(messageId, orderId, "pay_lost_" + SUFFIX);

    Eventually.await("the payment reached the dead-letter queue", DEADLINE, () -> messageCount(PAYMENTS_DEAD),
        c -> c == 1);
    GetResponse dead = admin.basicGet(PAYMENTS_DEAD, true);
    assertThat(dead.getProps().getMessageId()).isEqualTo(messageId);
    // each of the three attempts rolled back with its inbox row: the id is not recorded, no event was written
    assertThat(count("SELECT COUNT(*) FROM " + SCHEMA + ".idem_inbox WHERE event_id = ?", messageId)).isZero();
    assertThat(count("SELECT COUNT(*) FROM " + SCHEMA + ".idem_outbox WHERE payload LIKE ?", "%" + orderId + "%"))
        .isZero();
  }

  private static HttpResponse<String> place(String requestId, String customer, String sku, int quantity)
      throws IOException, InterruptedException {
    String body = json.writeValueAsString(Map.of("requestId", requestId, "customer", customer, "sku", sku,
        "quantity", quantity));
    HttpRequest request = HttpRequest.newBuilder(base.resolve("/orders")).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).GET().build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static void publishPayment(String messageId, String orderId, String paymentId) throws IOException {
    AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(messageId).type("payment.succeeded")
        .contentType("application/json").deliveryMode(2).build();
    byte[] body = json.writeValueAsString(Map.of("orderId", orderId, "paymentId", paymentId))
        .getBytes(StandardCharsets.UTF_8);
    admin.basicPublish("", PAYMENTS, props, body);
  }

  private static GetResponse nextConfirmed() {
    try {
      return admin.basicGet(CONFIRMED, true);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static long messageCount(String queue) {
    try {
      return admin.messageCount(queue);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static double counter(String name) {
    Counter c = context.getBean(MeterRegistry.class).find(name).tag("consumer", "payments").counter();
    return c == null ? 0 : c.count();
  }

  private static long count(String sql, Object... args) {
    try (java.sql.Connection c = TestPostgres.postgres().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
