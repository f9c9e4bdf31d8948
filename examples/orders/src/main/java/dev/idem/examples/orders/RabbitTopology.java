package dev.idem.examples.orders;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Declares what the service needs on the broker before its consumer starts (declaring is idempotent): the payments
 * queue, dead-lettered to {@code <queue>.dead}, where the consumer puts messages it gives up on; and the topic
 * exchange {@code order.confirmed} is published to. Off with {@code orders.rabbitmq.declare=false} where the broker's
 * topology is managed elsewhere.
 */
@Component
public class RabbitTopology {

  public RabbitTopology(ConnectionFactory factory,
      @Value("${orders.rabbitmq.declare:true}") boolean declare,
      @Value("${idem.consumers.payments.rabbitmq.queue}") String queue,
      @Value("${orders.events.exchange}") String exchange) throws IOException, TimeoutException {
    if (!declare) {
      return;
    }
    try (Connection connection = factory.newConnection("orders-topology");
        Channel channel = connection.createChannel()) {
      channel.queueDeclare(queue + ".dead", true, false, false, null);
      channel.queueDeclare(queue, true, false, false,
          Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", queue + ".dead"));
      channel.exchangeDeclare(exchange, BuiltinExchangeType.TOPIC, true);
    }
  }
}
