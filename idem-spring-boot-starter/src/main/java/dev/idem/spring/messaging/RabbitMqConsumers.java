package dev.idem.spring.messaging;

import static dev.idem.spring.messaging.Options.checked;
import static dev.idem.spring.messaging.Options.set;

import com.rabbitmq.client.ConnectionFactory;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.rabbitmq.RabbitMqInboxConsumer;
import java.net.URISyntaxException;
import java.security.GeneralSecurityException;
import java.util.function.Supplier;
import org.springframework.beans.factory.BeanFactory;

/** Builds the RabbitMQ consumers of {@code idem.consumers.*}; loaded only when idem-rabbitmq is present. */
final class RabbitMqConsumers {
  private RabbitMqConsumers() {}

  /** Checks the consumer's settings by building it once, and returns what builds and starts it. */
  static Supplier<AutoCloseable> starter(String name, IdemConsumersProperties properties, Inbox inbox,
      InboxHandler handler, ConsumerListener listener, BeanFactory beans) {
    String prefix = IdemConsumersProperties.PREFIX + "." + name + ".rabbitmq";
    IdemConsumersProperties.RabbitMq r = properties.getConsumers().get(name).getRabbitmq();
    ConnectionFactory factory = beans.getBeanProvider(ConnectionFactory.class)
        .getIfUnique(() -> fromUri(prefix, properties.getRabbitmq().getUri()));
    Supplier<RabbitMqInboxConsumer> build = () -> {
      RabbitMqInboxConsumer.Builder b = checked(prefix + ".queue",
          () -> RabbitMqInboxConsumer.builder(factory, inbox, name, r.getQueue()));
      set(prefix + ".prefetch", r.getPrefetch(), b::prefetch);
      set(prefix + ".channels", r.getChannels(), b::channels);
      set(prefix + ".failure-pause", r.getFailurePause(), b::failurePause);
      set(prefix + ".max-failure-pause", r.getMaxFailurePause(), b::maxFailurePause);
      set(prefix + ".max-failures", r.getMaxFailures(), b::maxFailures);
      set(prefix + ".shutdown-timeout", r.getShutdownTimeout(), b::shutdownTimeout);
      set(prefix + ".first-delivery-order", r.getFirstDeliveryOrder(), b::firstDeliveryOrder);
      if (r.getDeadLetterExchange() == null && r.getDeadLetterRoutingKey() != null) {
        throw new IllegalStateException(prefix + ".dead-letter-routing-key is set but " + prefix
            + ".dead-letter-exchange is not: set the exchange too, or neither");
      }
      set(prefix + ".dead-letter-exchange", r.getDeadLetterExchange(),
          exchange -> b.deadLetterExchange(exchange, r.getDeadLetterRoutingKey()));
      set(prefix + ".dead-letter-attempts", r.getDeadLetterAttempts(), b::deadLetterAttempts);
      // build() checks the failure pause against its maximum
      return checked(prefix + ".max-failure-pause", () -> b.handler(handler).listener(listener).build());
    };
    build.get();
    return () -> checked(prefix + ".queue", () -> build.get().start());
  }

  private static ConnectionFactory fromUri(String prefix, String uri) {
    String property = IdemConsumersProperties.PREFIX + ".rabbitmq.uri";
    if (uri == null || uri.isBlank()) {
      throw new IllegalStateException(prefix + ".queue is set but RabbitMQ is not: set " + property
          + " or define a com.rabbitmq.client.ConnectionFactory bean");
    }
    ConnectionFactory factory = new ConnectionFactory();
    try {
      factory.setUri(uri);
    } catch (URISyntaxException | GeneralSecurityException | IllegalArgumentException e) {
      // the URI may hold a password: it is not repeated
      throw new IllegalStateException(property + " is not an AMQP URI (amqp://user:password@host:port/vhost)");
    }
    return factory;
  }
}
