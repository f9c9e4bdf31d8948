package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import dev.idem.test.Eventually;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The listener contract on the local RabbitMQ: a durable queue of the test's own whose dead-letter exchange routes to
 * a second queue. RabbitMQ dead-letters a rejected message as it came, adding its {@code x-death} header. With
 * {@link #republishes()}, the application republishes what it gives up on to an exchange of the test's own
 * ({@code idem.listeners.rabbit.dead-letter-exchange}), which routes key {@code poisoned} to a third queue, with Idem's
 * {@code idem-dlt-*} headers.
 */
abstract class RabbitListenersContract extends ListenersContract {
  final String queue = "listeners-" + suffix;
  final String deadLetters = queue + "-dlq";
  final String idemExchange = queue + "-dlx";
  final String idemDeadLetters = queue + "-idem-dlq";
  /** The exchange the application is told to republish to: {@link #idemExchange} unless a test changes it. */
  String deadLetterExchange = idemExchange;
  Connection rabbit;
  Channel admin;

  /** Whether the application republishes what it gives up on itself, with the attempt history. */
  boolean republishes() {
    return false;
  }

  static String uri() {
    return System.getProperty("idem.test.rabbitmq.uri", "amqp://guest:guest@127.0.0.1:5672");
  }

  /** An admin connection's channel; declares {@code queue} dead-lettered to {@code deadLetters}. */
  static Channel declare(Connection rabbit, String queue, String deadLetters) throws Exception {
    Channel channel = rabbit.createChannel();
    channel.queueDeclare(deadLetters, true, false, false, null);
    channel.queueDeclare(queue, true, false, false,
        Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", deadLetters));
    return channel;
  }

  static Connection connect() throws Exception {
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(uri());
    factory.setConnectionTimeout(5_000);
    return factory.newConnection("listeners-test");
  }

  static List<String> rabbitProperties(String queue) {
    return List.of("spring.rabbitmq.addresses=" + uri(), "listeners.rabbit.queue=" + queue);
  }

  static void publish(Channel channel, String queue, String id, String payload) throws Exception {
    AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(id).deliveryMode(2).build();
    channel.basicPublish("", queue, props, payload.getBytes(StandardCharsets.UTF_8));
  }

  @Override
  List<String> broker() throws Exception {
    rabbit = connect();
    admin = declare(rabbit, queue, deadLetters);
    if (!republishes()) {
      return rabbitProperties(queue);
    }
    admin.exchangeDeclare(idemExchange, BuiltinExchangeType.DIRECT, true);
    admin.queueDeclare(idemDeadLetters, true, false, false, null);
    admin.queueBind(idemDeadLetters, idemExchange, "poisoned");
    List<String> properties = new ArrayList<>(rabbitProperties(queue));
    properties.add("idem.listeners.rabbit.dead-letter-exchange=" + deadLetterExchange);
    properties.add("idem.listeners.rabbit.dead-letter-routing-key=poisoned");
    return properties;
  }

  @Override
  void publish(String id, String payload) throws Exception {
    publish(admin, queue, id, payload);
  }

  @Override
  DeadLetter awaitDeadLetter() {
    String from = republishes() ? idemDeadLetters : deadLetters;
    GetResponse r = Eventually.await("a message on " + from, DEADLINE, () -> {
      try {
        return admin.basicGet(from, true);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, found -> found != null);
    Map<String, Object> headers = r.getProps().getHeaders() == null ? Map.of()
        : new HashMap<>(r.getProps().getHeaders());
    return new DeadLetter(r.getProps().getMessageId(), new String(r.getBody(), StandardCharsets.UTF_8), headers);
  }

  @Override
  void assertAttemptsTold(DeadLetter dead, int attempts) {
    if (!republishes()) {
      assertRejectedFromTheQueue(dead);
      return;
    }
    assertRepublished(dead, "handler_failed", attempts);
    for (int i = 1; i <= attempts; i++) {
      assertThat(dead.headers().get("idem-dlt-attempt-" + i).toString()).contains("poison message " + dead.id());
    }
    assertThat(dead.headers()).doesNotContainKey("idem-dlt-attempt-" + (attempts + 1));
  }

  @Override
  void assertRefusalTold(DeadLetter dead) {
    assertThat(dead.id()).isNull();
    if (republishes()) {
      assertRepublished(dead, "missing_event_id", 0);
    } else {
      assertRejectedFromTheQueue(dead);
    }
  }

  /** Republished by the application, once, with Idem's headers; nothing went to the queue's own dead letters. */
  private void assertRepublished(DeadLetter dead, String reason, int attempts) {
    assertThat(dead.headers()).doesNotContainKey("x-death");
    assertThat(dead.headers().get("idem-dlt-reason")).hasToString(reason);
    assertThat(dead.headers().get("idem-dlt-consumer")).hasToString(CONSUMER);
    assertThat(dead.headers().get("idem-dlt-queue")).hasToString(queue);
    assertThat(dead.headers().get("idem-dlt-attempts")).hasToString(Integer.toString(attempts));
    assertThat(messageCount(idemDeadLetters)).as("dead letters after the first").isZero();
    assertThat(messageCount(deadLetters)).as("the queue's own dead letters").isZero();
  }

  long messageCount(String name) {
    try {
      return admin.messageCount(name);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The attempts are not in the message (RabbitMQ dead-letters it as it came): its x-death says it was rejected. */
  private void assertRejectedFromTheQueue(DeadLetter dead) {
    assertThat(dead.headers()).containsKey("x-death");
    List<?> deaths = (List<?>) dead.headers().get("x-death");
    Map<?, ?> death = (Map<?, ?>) deaths.get(0);
    assertThat(death.get("reason").toString()).isEqualTo("rejected");
    assertThat(death.get("queue").toString()).isEqualTo(queue);
  }

  @Override
  void stopAndAssertAllAcknowledged() throws Exception {
    context.close(); // an unacknowledged message would go back to the queue now
    context = null;
    assertThat(admin.queueDeclarePassive(queue).getMessageCount()).isZero();
  }

  @Override
  void dropBroker() throws Exception {
    if (admin != null) {
      admin.queueDelete(queue);
      admin.queueDelete(deadLetters);
      if (republishes()) {
        admin.queueDelete(idemDeadLetters);
        admin.exchangeDelete(idemExchange);
      }
    }
    if (rabbit != null) {
      rabbit.close();
    }
  }
}
