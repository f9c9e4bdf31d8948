package dev.idem.spring.messaging;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.context.properties.source.UnboundElementsSourceFilter;
import org.springframework.core.env.Environment;

/**
 * The {@code idem.consumers.*} properties: one inbox consumer per name, {@code idem.consumers.<name>.*}, and the
 * broker connections they share, {@code idem.consumers.rabbitmq.*}, {@code idem.consumers.nats.*} and
 * {@code idem.consumers.kafka.*} (so {@code rabbitmq}, {@code nats} and {@code kafka} are not consumer names). Read
 * and checked once at startup by {@link #bind(Environment)}: a setting no consumer knows, a consumer with no broker
 * or with two, a missing queue, subject or topic fails the start with a message that names the property.
 *
 * <p>Settings left out keep the defaults of the consumer's builder ({@code RabbitMqInboxConsumer.Builder},
 * {@code NatsInboxConsumer.Builder}, {@code KafkaInboxConsumer.Builder}).
 */
public final class IdemConsumersProperties {
  /** The root of every consumer property. */
  public static final String PREFIX = "idem.consumers";
  private static final Set<String> BROKERS = Set.of("rabbitmq", "nats", "kafka");
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

  private final Map<String, Consumer> consumers;
  private final RabbitMqConnection rabbitmq;
  private final NatsConnection nats;
  private final KafkaConnection kafka;

  private IdemConsumersProperties(Map<String, Consumer> consumers, RabbitMqConnection rabbitmq, NatsConnection nats,
      KafkaConnection kafka) {
    this.consumers = consumers;
    this.rabbitmq = rabbitmq;
    this.nats = nats;
    this.kafka = kafka;
  }

  /**
   * Reads and checks the {@code idem.consumers.*} properties of {@code environment}.
   *
   * @throws IllegalStateException naming the property, when a setting is unknown, missing or out of place
   */
  public static IdemConsumersProperties bind(Environment environment) {
    Binder binder = Binder.get(environment);
    ConfigurationPropertyName root = ConfigurationPropertyName.of(PREFIX);
    Map<String, Consumer> consumers = new LinkedHashMap<>();
    for (String name : names(environment, root)) {
      if (!NAME.matcher(name).matches()) {
        throw new IllegalStateException(PREFIX + "." + name + ": a consumer's name must be 1 to 64 lowercase letters,"
            + " digits or '-', starting with a letter or digit");
      }
      Consumer consumer = strictly(binder, PREFIX + "." + name, Consumer.class, new Consumer());
      consumer.check(PREFIX + "." + name);
      consumers.put(name, consumer);
    }
    return new IdemConsumersProperties(consumers,
        strictly(binder, PREFIX + ".rabbitmq", RabbitMqConnection.class, new RabbitMqConnection()),
        strictly(binder, PREFIX + ".nats", NatsConnection.class, new NatsConnection()),
        strictly(binder, PREFIX + ".kafka", KafkaConnection.class, new KafkaConnection()));
  }

  /** The names under {@code idem.consumers} that are not a broker's connection settings, in the order found. */
  private static Set<String> names(Environment environment, ConfigurationPropertyName root) {
    Set<String> names = new LinkedHashSet<>();
    for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
      if (source instanceof IterableConfigurationPropertySource iterable) {
        iterable.filter(root::isAncestorOf).forEach(n -> {
          String name = n.getElement(root.getNumberOfElements(), ConfigurationPropertyName.Form.ORIGINAL);
          if (!BROKERS.contains(name)) {
            names.add(name);
          }
        });
      }
    }
    return names;
  }

  /**
   * Binds {@code prefix} to {@code type}, refusing any property under it that the type does not have (except in the
   * system environment, whose names map to properties only loosely, as for Spring's own strict binding).
   */
  private static <T> T strictly(Binder binder, String prefix, Class<T> type, T empty) {
    try {
      return binder.bind(prefix, Bindable.of(type),
          new NoUnboundElementsBindHandler(BindHandler.DEFAULT, new UnboundElementsSourceFilter())).orElse(empty);
    } catch (BindException e) {
      for (Throwable c = e; c != null; c = c.getCause()) {
        if (c instanceof UnboundConfigurationPropertiesException unbound) {
          String names = unbound.getUnboundProperties().stream().map(ConfigurationProperty::getName)
              .map(ConfigurationPropertyName::toString).sorted().reduce((a, b) -> a + ", " + b).orElse(prefix);
          throw new IllegalStateException(names + ": not a setting of " + prefix + what(prefix), e);
        }
      }
      throw new IllegalStateException(prefix + ": " + e.getMessage()
          + (e.getCause() == null ? "" : " (" + e.getCause().getMessage() + ")"), e);
    }
  }

  private static String what(String prefix) {
    String last = prefix.substring(prefix.lastIndexOf('.') + 1);
    if (prefix.equals(PREFIX + "." + last) && !BROKERS.contains(last)) {
      return " (a consumer takes handler, enabled, and the settings of one broker: rabbitmq.*, nats.* or kafka.*)";
    }
    return "";
  }

  /** The consumers by name, in the order their properties were found. */
  public Map<String, Consumer> getConsumers() {
    return consumers;
  }

  /** The RabbitMQ connection ({@code idem.consumers.rabbitmq.*}). */
  public RabbitMqConnection getRabbitmq() {
    return rabbitmq;
  }

  /** The NATS connection ({@code idem.consumers.nats.*}). */
  public NatsConnection getNats() {
    return nats;
  }

  /** The Kafka connection ({@code idem.consumers.kafka.*}). */
  public KafkaConnection getKafka() {
    return kafka;
  }

  /** One consumer: {@code idem.consumers.<name>.*}. Exactly one of {@code rabbitmq}, {@code nats}, {@code kafka}. */
  public static class Consumer {
    /** Run this consumer (default true). */
    private boolean enabled = true;
    /** The name of the {@code InboxHandler} bean that applies each message's effect. Required. */
    private String handler;
    private RabbitMq rabbitmq;
    private Nats nats;
    private Kafka kafka;

    void check(String prefix) {
      int brokers = (rabbitmq == null ? 0 : 1) + (nats == null ? 0 : 1) + (kafka == null ? 0 : 1);
      if (brokers == 0) {
        throw new IllegalStateException(prefix + " names no broker: set " + prefix + ".rabbitmq.queue, " + prefix
            + ".nats.stream and .nats.subject, or " + prefix + ".kafka.topic");
      }
      if (brokers > 1) {
        throw new IllegalStateException(prefix + " sets " + (rabbitmq == null ? "" : prefix + ".rabbitmq.* and ")
            + (nats == null ? "" : prefix + ".nats.*" + (kafka == null ? "" : " and ")) + (kafka == null ? ""
            : prefix + ".kafka.*") + ": a consumer reads one broker; make one consumer per broker");
      }
      if (handler == null || handler.isBlank()) {
        throw new IllegalStateException(prefix + ".handler is required: the name of the InboxHandler bean that"
            + " applies each message's effect");
      }
      if (rabbitmq != null) {
        required(prefix + ".rabbitmq.queue", rabbitmq.queue);
      }
      if (nats != null) {
        required(prefix + ".nats.stream", nats.stream);
        required(prefix + ".nats.subject", nats.subject);
      }
      if (kafka != null) {
        required(prefix + ".kafka.topic", kafka.topic);
      }
    }

    private static void required(String property, String value) {
      if (value == null || value.isBlank()) {
        throw new IllegalStateException(property + " is required");
      }
    }

    /** The broker this consumer reads: {@code rabbitmq}, {@code nats} or {@code kafka}. */
    public String broker() {
      return rabbitmq != null ? "rabbitmq" : nats != null ? "nats" : "kafka";
    }

    public boolean isEnabled() {
      return enabled;
    }

    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    public String getHandler() {
      return handler;
    }

    public void setHandler(String handler) {
      this.handler = handler;
    }

    public RabbitMq getRabbitmq() {
      return rabbitmq;
    }

    public void setRabbitmq(RabbitMq rabbitmq) {
      this.rabbitmq = rabbitmq;
    }

    public Nats getNats() {
      return nats;
    }

    public void setNats(Nats nats) {
      this.nats = nats;
    }

    public Kafka getKafka() {
      return kafka;
    }

    public void setKafka(Kafka kafka) {
      this.kafka = kafka;
    }
  }

  /** A RabbitMQ consumer: {@code idem.consumers.<name>.rabbitmq.*}. */
  public static class RabbitMq extends RabbitDeadLetterProperties {
    /** The queue to consume; it must exist. Required. */
    private String queue;
    /** Unacknowledged messages the broker sends each channel ahead (default 32). */
    private Integer prefetch;
    /** Channels consuming the queue, each one message at a time (default 1). */
    private Integer channels;
    /**
     * How long a channel waits after a message's first failure before requeueing it, doubled after each next one up to
     * {@code max-failure-pause}; the same curve spaces the tries of a message it holds while the database is away
     * (default 100 ms).
     */
    private Duration failurePause;
    /** The longest wait the failure pause doubles up to (default 30 s, or the failure pause when longer). */
    private Duration maxFailurePause;
    /**
     * Failures of one message id after which it is given up on: republished to {@code dead-letter-exchange}, or
     * rejected without requeue, to the queue's own dead-letter exchange (default 5; -1 never).
     */
    private Integer maxFailures;
    /** How long stopping waits for messages being processed (default 10 s). */
    private Duration shutdownTimeout;
    /**
     * Whether a message the broker has not delivered before runs the handler before the inbox records it, saving
     * round trips on PostgreSQL; the handler may then run for a producer's duplicate, its writes rolled back
     * (default false).
     */
    private Boolean firstDeliveryOrder;

    public String getQueue() {
      return queue;
    }

    public void setQueue(String queue) {
      this.queue = queue;
    }

    public Integer getPrefetch() {
      return prefetch;
    }

    public void setPrefetch(Integer prefetch) {
      this.prefetch = prefetch;
    }

    public Integer getChannels() {
      return channels;
    }

    public void setChannels(Integer channels) {
      this.channels = channels;
    }

    public Duration getFailurePause() {
      return failurePause;
    }

    public void setFailurePause(Duration failurePause) {
      this.failurePause = failurePause;
    }

    public Duration getMaxFailurePause() {
      return maxFailurePause;
    }

    public void setMaxFailurePause(Duration maxFailurePause) {
      this.maxFailurePause = maxFailurePause;
    }

    public Integer getMaxFailures() {
      return maxFailures;
    }

    public void setMaxFailures(Integer maxFailures) {
      this.maxFailures = maxFailures;
    }

    public Duration getShutdownTimeout() {
      return shutdownTimeout;
    }

    public void setShutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout = shutdownTimeout;
    }

    public Boolean getFirstDeliveryOrder() {
      return firstDeliveryOrder;
    }

    public void setFirstDeliveryOrder(Boolean firstDeliveryOrder) {
      this.firstDeliveryOrder = firstDeliveryOrder;
    }
  }

  /** A NATS JetStream consumer: {@code idem.consumers.<name>.nats.*}. */
  public static class Nats {
    /** The stream; it must exist. Required. */
    private String stream;
    /** The subject the durable consumer is filtered on. Required. */
    private String subject;
    /** The durable consumer's name (default: the consumer's name). */
    private String durable;
    /** Messages fetched at once (default 64). */
    private Integer batchSize;
    /** How long JetStream waits for an ack before delivering a message again (default 30 s). */
    private Duration ackWait;
    /** How long one fetch waits when there are no messages (default 500 ms). */
    private Duration fetchWait;
    /**
     * Deliveries of one message before it is given up on: published to {@code dead-letter-subject} if set, then
     * terminated (default -1: unlimited).
     */
    private Long maxDeliver;
    /**
     * The subject a message given up on is published to, with its headers and Idem's {@code idem-dlt-*} headers,
     * before it is terminated; a stream must capture it, and the consumer's own subject must not match it. Unset:
     * such a message is terminated without a copy.
     */
    private String deadLetterSubject;
    /** How long a dead letter may wait for JetStream's publish ack (default 10 s). */
    private Duration deadLetterTimeout;
    /** A fixed delay before a failed message is delivered again (default: 100 ms doubling up to 30 s). */
    private Duration nakDelay;
    /** How long stopping waits, beyond the fetch wait, for the message in hand (default 10 s). */
    private Duration shutdownTimeout;
    /**
     * Whether a message the broker has not delivered before runs the handler before the inbox records it, saving
     * round trips on PostgreSQL; the handler may then run for a producer's duplicate, its writes rolled back
     * (default false).
     */
    private Boolean firstDeliveryOrder;

    public String getStream() {
      return stream;
    }

    public void setStream(String stream) {
      this.stream = stream;
    }

    public String getSubject() {
      return subject;
    }

    public void setSubject(String subject) {
      this.subject = subject;
    }

    public String getDurable() {
      return durable;
    }

    public void setDurable(String durable) {
      this.durable = durable;
    }

    public Integer getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(Integer batchSize) {
      this.batchSize = batchSize;
    }

    public Duration getAckWait() {
      return ackWait;
    }

    public void setAckWait(Duration ackWait) {
      this.ackWait = ackWait;
    }

    public Duration getFetchWait() {
      return fetchWait;
    }

    public void setFetchWait(Duration fetchWait) {
      this.fetchWait = fetchWait;
    }

    public Long getMaxDeliver() {
      return maxDeliver;
    }

    public void setMaxDeliver(Long maxDeliver) {
      this.maxDeliver = maxDeliver;
    }

    public String getDeadLetterSubject() {
      return deadLetterSubject;
    }

    public void setDeadLetterSubject(String deadLetterSubject) {
      this.deadLetterSubject = deadLetterSubject;
    }

    public Duration getDeadLetterTimeout() {
      return deadLetterTimeout;
    }

    public void setDeadLetterTimeout(Duration deadLetterTimeout) {
      this.deadLetterTimeout = deadLetterTimeout;
    }

    public Duration getNakDelay() {
      return nakDelay;
    }

    public void setNakDelay(Duration nakDelay) {
      this.nakDelay = nakDelay;
    }

    public Duration getShutdownTimeout() {
      return shutdownTimeout;
    }

    public void setShutdownTimeout(Duration shutdownTimeout) {
      this.shutdownTimeout = shutdownTimeout;
    }

    public Boolean getFirstDeliveryOrder() {
      return firstDeliveryOrder;
    }

    public void setFirstDeliveryOrder(Boolean firstDeliveryOrder) {
      this.firstDeliveryOrder = firstDeliveryOrder;
    }
  }

  /** A Kafka consumer: {@code idem.consumers.<name>.kafka.*}. */
  public static class Kafka {
    /** The topic to consume; it and its dead-letter topic must exist. Required. */
    private String topic;
    /** The consumer group (default: the consumer's name). */
    private String groupId;
    /** The dead-letter topic (default {@code <topic>.dlt}). */
    private String deadLetterTopic;
    /** At most how many records one poll returns (default 100). */
    private Integer batchSize;
    /** After how many failures of the handler a record is dead-lettered (default 5). */
    private Integer maxAttempts;
    /** The largest record value processed; larger ones are dead-lettered (default 1 MiB). */
    private Integer maxPayloadBytes;
    /** The pause after a first failure, doubled after each next one up to 30 s (default 1 s). */
    private Duration failurePause;
    /** How long one poll waits for records (default 500 ms). */
    private Duration pollTimeout;
    /** How long an offset commit, a dead-letter send or the topic check may take (default 15 s). */
    private Duration sendTimeout;
    /** How long stopping waits for the clients to close (default 30 s). */
    private Duration closeTimeout;
    /**
     * Whether a partition's batch that comes after a poll it committed cleanly (no failure, no duplicate) runs the
     * handler before the inbox records it, saving a round trip on PostgreSQL; the handler may then run for a
     * producer's duplicate, its writes rolled back (default false).
     */
    private Boolean firstDeliveryOrder;
    /** Kafka consumer settings of this consumer, over {@code idem.consumers.kafka.properties.*}. */
    private Map<String, String> properties = new LinkedHashMap<>();

    public String getTopic() {
      return topic;
    }

    public void setTopic(String topic) {
      this.topic = topic;
    }

    public String getGroupId() {
      return groupId;
    }

    public void setGroupId(String groupId) {
      this.groupId = groupId;
    }

    public String getDeadLetterTopic() {
      return deadLetterTopic;
    }

    public void setDeadLetterTopic(String deadLetterTopic) {
      this.deadLetterTopic = deadLetterTopic;
    }

    public Integer getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(Integer batchSize) {
      this.batchSize = batchSize;
    }

    public Integer getMaxAttempts() {
      return maxAttempts;
    }

    public void setMaxAttempts(Integer maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    public Integer getMaxPayloadBytes() {
      return maxPayloadBytes;
    }

    public void setMaxPayloadBytes(Integer maxPayloadBytes) {
      this.maxPayloadBytes = maxPayloadBytes;
    }

    public Duration getFailurePause() {
      return failurePause;
    }

    public void setFailurePause(Duration failurePause) {
      this.failurePause = failurePause;
    }

    public Boolean getFirstDeliveryOrder() {
      return firstDeliveryOrder;
    }

    public void setFirstDeliveryOrder(Boolean firstDeliveryOrder) {
      this.firstDeliveryOrder = firstDeliveryOrder;
    }

    public Duration getPollTimeout() {
      return pollTimeout;
    }

    public void setPollTimeout(Duration pollTimeout) {
      this.pollTimeout = pollTimeout;
    }

    public Duration getSendTimeout() {
      return sendTimeout;
    }

    public void setSendTimeout(Duration sendTimeout) {
      this.sendTimeout = sendTimeout;
    }

    public Duration getCloseTimeout() {
      return closeTimeout;
    }

    public void setCloseTimeout(Duration closeTimeout) {
      this.closeTimeout = closeTimeout;
    }

    public Map<String, String> getProperties() {
      return properties;
    }

    public void setProperties(Map<String, String> properties) {
      this.properties = properties;
    }
  }

  /** The RabbitMQ connection of every RabbitMQ consumer: {@code idem.consumers.rabbitmq.*}. */
  public static class RabbitMqConnection {
    /**
     * The AMQP URI, e.g. {@code amqp://user:password@host:5672/vhost}; used when the application defines no
     * {@code com.rabbitmq.client.ConnectionFactory} bean. Never logged.
     */
    private String uri;

    public String getUri() {
      return uri;
    }

    public void setUri(String uri) {
      this.uri = uri;
    }
  }

  /** The NATS connection of every NATS consumer: {@code idem.consumers.nats.*}. */
  public static class NatsConnection {
    /** The server URL, e.g. {@code nats://127.0.0.1:4222}; used when the application defines no Connection bean. */
    private String url;

    public String getUrl() {
      return url;
    }

    public void setUrl(String url) {
      this.url = url;
    }
  }

  /** The Kafka cluster of every Kafka consumer: {@code idem.consumers.kafka.*}. */
  public static class KafkaConnection {
    /** The bootstrap servers, e.g. {@code 127.0.0.1:9092}. Required for a Kafka consumer. */
    private String bootstrapServers;
    /** Kafka consumer settings every Kafka consumer gets (security, timeouts), e.g. {@code security.protocol}. */
    private Map<String, String> properties = new LinkedHashMap<>();

    public String getBootstrapServers() {
      return bootstrapServers;
    }

    public void setBootstrapServers(String bootstrapServers) {
      this.bootstrapServers = bootstrapServers;
    }

    public Map<String, String> getProperties() {
      return properties;
    }

    public void setProperties(Map<String, String> properties) {
      this.properties = properties;
    }
  }
}
