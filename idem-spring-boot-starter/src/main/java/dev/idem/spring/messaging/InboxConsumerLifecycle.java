package dev.idem.spring.messaging;

import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import org.springframework.context.SmartLifecycle;

/**
 * Runs one inbox consumer configured by {@code idem.consumers.<name>.*} with the application: a fresh consumer is built
 * and started when the context has started everything else (the last phase), and closed when the context stops, first
 * of all: the consumer stops taking messages, waits for those in hand (up to its shutdown or close timeout) and
 * leaves the rest to the broker, which delivers them again. A consumer that cannot start (the broker is unreachable,
 * the queue or topic is missing) fails the start of the context. Thread-safe.
 */
public final class InboxConsumerLifecycle implements SmartLifecycle {
  private static final System.Logger LOG = System.getLogger(InboxConsumerLifecycle.class.getName());

  private final String name;
  private final String broker;
  private final Supplier<? extends AutoCloseable> starter;
  private volatile AutoCloseable consumer;

  /**
   * A lifecycle of the consumers {@code starter} starts.
   *
   * @param name the consumer's name, {@code idem.consumers.<name>}
   * @param broker {@code rabbitmq}, {@code nats} or {@code kafka}
   * @param starter builds and starts a consumer each time the context starts, and returns it
   */
  public InboxConsumerLifecycle(String name, String broker, Supplier<? extends AutoCloseable> starter) {
    this.name = Objects.requireNonNull(name, "name");
    this.broker = Objects.requireNonNull(broker, "broker");
    this.starter = Objects.requireNonNull(starter, "starter");
  }

  /** The consumer's name: the inbox's consumer name and the {@code consumer} tag of its meters. */
  public String name() {
    return name;
  }

  /** The broker it reads: {@code rabbitmq}, {@code nats} or {@code kafka}. */
  public String broker() {
    return broker;
  }

  /**
   * The running consumer ({@code RabbitMqInboxConsumer}, {@code NatsInboxConsumer} or {@code KafkaInboxConsumer}),
   * empty while the context is stopped.
   */
  public Optional<AutoCloseable> consumer() {
    AutoCloseable c = consumer;
    return Optional.ofNullable(c instanceof WithConnection w ? w.consumer() : c);
  }

  /** A consumer with the connection it was given, which closing closes after it. */
  record WithConnection(AutoCloseable consumer, AutoCloseable connection) implements AutoCloseable {
    @Override
    public void close() throws Exception {
      try {
        consumer.close();
      } finally {
        connection.close();
      }
    }
  }

  @Override
  public synchronized void start() {
    if (consumer == null) {
      consumer = starter.get();
      LOG.log(System.Logger.Level.INFO, "inbox consumer '" + name + "' (" + broker + ") started");
    }
  }

  @Override
  public synchronized void stop() {
    AutoCloseable c = consumer;
    if (c != null) {
      consumer = null;
      try {
        c.close();
      } catch (Exception e) {
        LOG.log(System.Logger.Level.WARNING, "inbox consumer '" + name + "' did not close cleanly", e);
      }
      LOG.log(System.Logger.Level.INFO, "inbox consumer '" + name + "' (" + broker + ") stopped");
    }
  }

  @Override
  public boolean isRunning() {
    return consumer != null;
  }

  @Override
  public String toString() {
    return "InboxConsumerLifecycle[" + name + ", " + broker + "]";
  }
}
