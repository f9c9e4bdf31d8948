package dev.idem.rabbitmq;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ShutdownSignalException;
import dev.idem.outbox.OutboxTransport;
import dev.idem.outbox.consumer.ConsumerOptions;
import dev.idem.outbox.consumer.DeadLetterHeaders;
import dev.idem.outbox.consumer.Decision;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Where messages given up on are republished: an exchange and a routing key. {@link #publish} sends a message there
 * with its body, its properties and its headers (Idem's {@code idem-dlt-*} headers of an earlier dead-lettering
 * dropped; like RabbitMQ's own dead-lettering, without its {@code expiration}, so that the copy does not expire, and
 * without its {@code CC} and {@code BCC} headers, which would route it elsewhere; without its {@code user-id}, which
 * RabbitMQ refuses unless it is the publishing connection's user) plus the {@link DeadLetterHeaders} of this one
 * ({@code idem-dlt-queue}, {@code idem-dlt-exchange} and {@code idem-dlt-routing-key} say where it came from; every
 * value is a string), and waits for the broker's publisher confirm: only then may the original be acknowledged. Each
 * publication opens a channel of its own in confirm mode and closes it, so a channel error (the exchange does not
 * exist) touches no consuming channel. The message is
 * published {@code mandatory}: an exchange that routes it nowhere returns it, and that is a failure too. The history
 * takes at most a quarter of the connection's frame size (the oldest failure lines are left out), since RabbitMQ
 * needs a message's properties in one frame. Thread-safe.
 */
public record RabbitMqDeadLetters(String exchange, String routingKey, Duration timeout) {
  /** AMQP's longest exchange name or routing key, in UTF-8 bytes. */
  private static final int MAX_NAME_BYTES = 255;
  private static final int DEFAULT_FRAME = 131_072;

  /**
   * Dead letters to {@code exchange} with {@code routingKey}, confirmed within {@code timeout}.
   *
   * @param exchange the exchange: not blank, at most 255 UTF-8 bytes (it must exist when a message is given up on)
   * @param routingKey at most 255 UTF-8 bytes; null for the consumed queue's name
   * @param timeout how long a dead letter may wait for its confirm: 1 ms to 5 min
   * @throws IllegalArgumentException on a bad name or timeout
   */
  public RabbitMqDeadLetters {
    if (exchange == null || exchange.isBlank()) {
      throw new IllegalArgumentException("the dead-letter exchange must not be blank, got '" + exchange + "'");
    }
    checkLength("dead-letter exchange", exchange);
    if (routingKey != null) {
      checkLength("dead-letter routing key", routingKey);
    }
    ConsumerOptions.between("the dead-letter timeout", timeout, Duration.ofMillis(1), Duration.ofMinutes(5));
  }

  /** Dead letters to {@code exchange} with {@code routingKey} (null: the queue's name), confirmed within 10 s. */
  public static RabbitMqDeadLetters to(String exchange, String routingKey) {
    return new RabbitMqDeadLetters(exchange, routingKey, Duration.ofSeconds(10));
  }

  private static void checkLength(String what, String name) {
    int length = name.getBytes(StandardCharsets.UTF_8).length;
    if (length > MAX_NAME_BYTES) {
      throw new IllegalArgumentException("the " + what + " must be at most " + MAX_NAME_BYTES + " UTF-8 bytes (AMQP's"
          + " limit), got " + length + ": '" + name + "'");
    }
  }

  /** These dead letters confirmed within {@code timeout} (1 ms to 5 min). */
  public RabbitMqDeadLetters timeout(Duration timeout) {
    return new RabbitMqDeadLetters(exchange, routingKey, timeout);
  }

  /** The routing key of the dead letters of {@code queue}. */
  public String routingKey(String queue) {
    return routingKey != null ? routingKey : queue;
  }

  /**
   * Republishes a message given up on and waits for its confirm.
   *
   * @param connection where to open the publishing channel
   * @param consumer the inbox's consumer name
   * @param queue the queue the message came from
   * @param original the message's exchange and routing key, its body and properties
   * @param decision {@code DEAD_LETTER} or {@code REJECT}
   * @param history one line per counted failure, oldest first
   * @throws IOException when it was not confirmed: nacked, returned unroutable, timed out, or the channel failed
   */
  public void publish(Connection connection, String consumer, String queue, Original original, Decision decision,
      List<String> history) throws IOException {
    Map<String, String> origin = new LinkedHashMap<>();
    origin.put("queue", queue);
    origin.put("exchange", original.exchange());
    origin.put("routing-key", original.routingKey());
    int frame = connection.getFrameMax() > 0 ? connection.getFrameMax() : DEFAULT_FRAME;
    Map<String, Object> headers = new HashMap<>();
    AMQP.BasicProperties props = original.properties() == null ? new AMQP.BasicProperties()
        : original.properties();
    if (props.getHeaders() != null) {
      props.getHeaders().forEach((name, value) -> {
        if (!DeadLetterHeaders.isOwn(name) && !isRoute(name) && value != null) {
          headers.put(name, value);
        }
      });
    }
    headers.putAll(DeadLetterHeaders.of(decision, consumer, origin, history, frame / 4));
    String key = routingKey(queue);
    AtomicReference<String> returned = new AtomicReference<>();
    Channel channel = null;
    try {
      channel = connection.createChannel();
      if (channel == null) {
        throw new IOException("the connection has no channel left");
      }
      channel.confirmSelect();
      channel.addReturnListener(r -> returned.set(r.getReplyCode() + " " + r.getReplyText()));
      channel.basicPublish(exchange, key, true, props.builder().headers(headers).expiration(null).userId(null).build(),
          original.body());
      if (!channel.waitForConfirms(timeout.toMillis())) {
        throw new Refused("RabbitMQ refused (nacked) the dead letter", null);
      }
      if (returned.get() != null) {
        throw new Refused("exchange '" + exchange + "' routed the dead letter nowhere (routing key '" + key
            + "'): " + returned.get(), null);
      }
    } catch (ShutdownSignalException e) {
      // a channel-level close is the broker refusing this publication (e.g. NOT_FOUND: the exchange is missing); a
      // connection-level one is the broker or the network away
      String what = OutboxTransport.describe(e);
      throw e.isHardError() ? new IOException(what, e) : new Refused(what, e);
    } catch (TimeoutException e) {
      throw new IOException("RabbitMQ did not confirm the dead letter within " + timeout.toMillis() + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for the dead letter's confirm", e);
    } catch (RuntimeException e) { // ShutdownSignalException (e.g. the exchange does not exist), AlreadyClosed...
      throw new IOException(OutboxTransport.describe(e), e);
    } finally {
      close(channel);
    }
  }

  /**
   * Whether {@code failure}, thrown by {@link #publish}, is the broker refusing the dead letter (a nack, no route, a
   * channel closed on it: a setting to fix), rather than a broker that did not answer in time or a connection that
   * is down, which pass. Consumers count only refusals towards rejecting a message instead.
   */
  public static boolean isRefusal(Throwable failure) {
    return failure instanceof Refused;
  }

  /**
   * The broker took the dead letter and refused it: a nack, no route from the exchange, a channel closed on it (the
   * exchange missing, access refused). A setting to fix, unlike a broker that does not answer in time or a
   * connection that is down, which pass.
   */
  static final class Refused extends IOException {
    private static final long serialVersionUID = 1L;

    Refused(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /** Whether header {@code name} adds routes to a publication (sender-selected distribution). */
  private static boolean isRoute(String name) {
    return "CC".equalsIgnoreCase(name) || "BCC".equalsIgnoreCase(name);
  }

  /**
   * Checks that the exchange exists ({@code exchange.declare} passive, on a channel of its own that is closed
   * after).
   *
   * @throws IOException naming the exchange when it does not exist or the check failed
   */
  public void checkExchange(Connection connection) throws IOException {
    Channel channel = null;
    try {
      channel = connection.createChannel();
      if (channel == null) {
        throw new IOException("the connection has no channel left");
      }
      channel.exchangeDeclarePassive(exchange);
    } catch (IOException | RuntimeException e) {
      Throwable cause = e instanceof IOException && e.getCause() != null ? e.getCause() : e;
      throw new IOException("the dead-letter exchange '" + exchange + "' cannot be used: "
          + OutboxTransport.describe(cause) + ". Declare it before starting, or unset it to reject messages given up"
          + " on to the queue's own dead-letter exchange", e);
    } finally {
      close(channel);
    }
  }

  private static void close(Channel channel) {
    if (channel != null && channel.isOpen()) {
      try {
        channel.abort();
      } catch (IOException | RuntimeException ignored) {
        // it served its one publication
      }
    }
  }

  @Override
  public String toString() {
    return "dead letters to exchange '" + exchange + "'" + (routingKey == null ? " with the queue's name"
        : " with routing key '" + routingKey + "'");
  }

  /**
   * The message given up on.
   *
   * @param exchange the exchange it was published to (empty for the default exchange)
   * @param routingKey its routing key
   * @param properties its properties, or null
   * @param body its body
   */
  public record Original(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
    public Original {
      body = body == null ? new byte[0] : body;
    }
  }
}
