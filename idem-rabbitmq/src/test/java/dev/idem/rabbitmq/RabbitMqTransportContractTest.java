package dev.idem.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import dev.idem.outbox.OutboxTransport;
import dev.idem.test.outbox.OutboxTransportContract;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link OutboxTransportContract} on the real RabbitMQ: each destination is a queue of its own behind the default
 * exchange ({@code rabbitmq:/<queue>}), read back with {@code basic.get}; its outage deletes the queue, so that the
 * broker returns the transport's mandatory messages as unroutable, and its end declares the queue again. The
 * transport's javadoc does not promise a batch's order, so the kit checks order only for messages sent one after
 * another; AMQP has no ordering key.
 */
class RabbitMqTransportContractTest extends OutboxTransportContract {
  private static Connection rabbit;
  private final Map<String, List<Received>> arrived = new ConcurrentHashMap<>();

  @BeforeAll
  static void connect() {
    rabbit = Rabbit.connect();
  }

  @AfterAll
  static void disconnect() throws Exception {
    rabbit.close();
  }

  @Override
  protected String createDestination() throws Exception {
    String queue = uniqueName("idem-kit-q-");
    declare(queue);
    return "rabbitmq:/" + queue;
  }

  @Override
  protected OutboxTransport createTransport() throws Exception {
    return RabbitMqTransport.builder(Rabbit.factory()).name("transport-kit").confirmTimeout(Duration.ofSeconds(5))
        .build();
  }

  @Override
  protected List<Received> received(String destination) throws Exception {
    List<Received> seen = arrived.computeIfAbsent(destination, d -> new ArrayList<>());
    try (Channel channel = rabbit.createChannel()) {
      GetResponse got;
      while ((got = channel.basicGet(queue(destination), true)) != null) {
        Map<String, String> headers = new LinkedHashMap<>();
        Map<String, Object> amqp = got.getProps().getHeaders();
        if (amqp != null) {
          amqp.forEach((k, v) -> headers.put(k, String.valueOf(v)));
        }
        seen.add(new Received(got.getProps().getMessageId(), got.getBody(), headers, null));
      }
    }
    return seen;
  }

  @Override
  protected void startOutage(String destination) throws Exception {
    delete(queue(destination));
  }

  @Override
  protected void endOutage(String destination) throws Exception {
    declare(queue(destination));
  }

  @Override
  protected void deleteDestination(String destination) throws Exception {
    delete(queue(destination));
  }

  private static void declare(String queue) throws Exception {
    try (Channel channel = rabbit.createChannel()) {
      channel.queueDeclare(queue, true, false, false, null);
    }
  }

  private static void delete(String queue) throws Exception {
    try (Channel channel = rabbit.createChannel()) {
      channel.queueDelete(queue);
    }
  }

  private static String queue(String destination) {
    return destination.substring("rabbitmq:/".length());
  }
}
