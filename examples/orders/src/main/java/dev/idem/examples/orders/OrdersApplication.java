package dev.idem.examples.orders;

import com.rabbitmq.client.ConnectionFactory;
import dev.idem.outbox.InboxHandler;
import dev.idem.rabbitmq.RabbitMqTransport;
import dev.idem.spring.outbox.OutboxRoute;
import java.net.URISyntaxException;
import java.security.GeneralSecurityException;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import tools.jackson.databind.ObjectMapper;

/**
 * The order service: {@code POST /orders} ({@link OrderController}), the {@code payments} inbox consumer
 * ({@link #paymentSucceeded}, configured by {@code idem.consumers.payments.*}) and the outbox relay's
 * {@code rabbitmq} route ({@link #rabbitRoute}).
 */
@SpringBootApplication
public class OrdersApplication {

  public static void main(String[] args) {
    SpringApplication.run(OrdersApplication.class, args);
  }

  /** The broker, for the inbox consumer and the relay's transport alike. */
  @Bean
  ConnectionFactory rabbitConnectionFactory(@Value("${orders.rabbitmq.uri}") String uri) {
    ConnectionFactory factory = new ConnectionFactory();
    try {
      factory.setUri(uri);
    } catch (URISyntaxException | GeneralSecurityException | IllegalArgumentException e) {
      // the URI may hold a password: it is not repeated
      throw new IllegalStateException("orders.rabbitmq.uri is not an AMQP URI (amqp://user:password@host:port/vhost)");
    }
    factory.setConnectionTimeout(5_000);
    return factory;
  }

  /** Publishes outbox events with publisher confirms; a bean of its own, so that Spring closes it. */
  @Bean
  RabbitMqTransport rabbitTransport(ConnectionFactory factory, @Value("${orders.events.exchange}") String exchange) {
    return RabbitMqTransport.builder(factory).name("orders").defaultExchange(exchange).build();
  }

  /** Events for the destination {@code rabbitmq} go to the exchange, with their type as the routing key. */
  @Bean
  OutboxRoute rabbitRoute(RabbitMqTransport transport) {
    return OutboxRoute.of("rabbitmq", transport);
  }

  /**
   * Handles {@code payment.succeeded}: runs once per message id, in the inbox's transaction (a Spring transaction),
   * which {@link OrderService#markPaid} joins, so the order's update, its {@code order.confirmed} event and the inbox
   * row commit together or not at all.
   */
  @Bean
  InboxHandler paymentSucceeded(OrderService orders, ObjectMapper json) {
    return (tx, event) -> {
      PaymentSucceeded payment = json.readValue(event.payload(), PaymentSucceeded.class);
      return orders.markPaid(payment) ? "paid" : "paid already";
    };
  }
}
