package dev.idem.spring.messaging;

import static dev.idem.spring.messaging.Options.checked;
import static dev.idem.spring.messaging.Options.set;

import dev.idem.nats.NatsInboxConsumer;
import dev.idem.nats.NatsJetStreamTransport;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.consumer.ConsumerListener;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options.Builder;
import java.io.IOException;
import java.util.function.Function;
import java.util.function.Supplier;
import org.springframework.beans.factory.BeanFactory;

/**
 * Builds the NATS JetStream consumers of {@code idem.consumers.*}; loaded only when idem-nats is present. With a
 * {@link Connection} bean the consumer uses it (and never closes it); otherwise it opens its own connection to
 * {@code idem.consumers.nats.url} when it starts, and closes it when it stops.
 */
final class NatsConsumers {
  private NatsConsumers() {}

  /** Checks the consumer's settings (by building it once when a connection bean exists), returns what starts it. */
  static Supplier<AutoCloseable> starter(String name, IdemConsumersProperties properties, Inbox inbox,
      InboxHandler handler, ConsumerListener listener, BeanFactory beans) {
    String prefix = IdemConsumersProperties.PREFIX + "." + name + ".nats";
    IdemConsumersProperties.Nats n = properties.getConsumers().get(name).getNats();
    Connection shared = beans.getBeanProvider(Connection.class).getIfUnique();
    String url = properties.getNats().getUrl();
    if (shared == null && (url == null || url.isBlank())) {
      throw new IllegalStateException(prefix + ".subject is set but NATS is not: set " + IdemConsumersProperties.PREFIX
          + ".nats.url or define an io.nats.client.Connection bean");
    }
    Function<Connection, NatsInboxConsumer> build = connection -> {
      NatsInboxConsumer.Builder b = checked(prefix + ".subject",
          () -> NatsInboxConsumer.builder(connection, inbox, name, n.getStream(), n.getSubject()));
      set(prefix + ".durable", n.getDurable(), b::durable);
      set(prefix + ".batch-size", n.getBatchSize(), b::batchSize);
      set(prefix + ".ack-wait", n.getAckWait(), b::ackWait);
      set(prefix + ".fetch-wait", n.getFetchWait(), b::fetchWait);
      set(prefix + ".max-deliver", n.getMaxDeliver(), b::maxDeliver);
      set(prefix + ".dead-letter-subject", n.getDeadLetterSubject(), b::deadLetterSubject);
      set(prefix + ".dead-letter-timeout", n.getDeadLetterTimeout(), b::deadLetterTimeout);
      set(prefix + ".nak-delay", n.getNakDelay(), b::nakDelay);
      set(prefix + ".shutdown-timeout", n.getShutdownTimeout(), b::shutdownTimeout);
      set(prefix + ".first-delivery-order", n.getFirstDeliveryOrder(), b::firstDeliveryOrder);
      return b.handler(handler).listener(listener).build();
    };
    if (shared != null) {
      build.apply(shared);
      return () -> checked(prefix + ".stream", () -> build.apply(shared).start());
    }
    return () -> {
      Connection own = connect(url);
      try {
        NatsInboxConsumer consumer = checked(prefix + ".stream", () -> build.apply(own).start());
        return new InboxConsumerLifecycle.WithConnection(consumer, own);
      } catch (RuntimeException e) {
        closeQuietly(own, e);
        throw e;
      }
    };
  }

  private static Connection connect(String url) {
    String property = IdemConsumersProperties.PREFIX + ".nats.url";
    Builder options;
    try {
      options = new Builder().server(url).connectionName("idem-consumers");
    } catch (IllegalArgumentException e) {
      // the URL may hold credentials: it is not repeated
      throw new IllegalStateException(property + " is not a NATS URL (nats://host:port)");
    }
    try {
      return Nats.connect(options.build());
    } catch (IOException e) {
      // jnats names the servers it tried, with their user information (a password) when the URL has one: neither its
      // message nor the exception is kept as it is
      throw new IllegalStateException("NATS is not reachable at " + property + ": " + e.getClass().getName() + ": "
          + NatsJetStreamTransport.withoutUserInfo(e.getMessage()));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while connecting to NATS (" + property + ")", e);
    }
  }

  private static void closeQuietly(Connection connection, RuntimeException cause) {
    try {
      connection.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      cause.addSuppressed(e);
    } catch (RuntimeException e) {
      cause.addSuppressed(e);
    }
  }
}
