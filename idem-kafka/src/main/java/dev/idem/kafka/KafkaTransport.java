package dev.idem.kafka;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnknownProducerIdException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Publishes outbox events to Kafka with an idempotent producer ({@code enable.idempotence=true}, {@code acks=all}): an
 * event counts as delivered only once the broker has acknowledged it, that is, once every in-sync replica has it.
 *
 * <h2>Destinations</h2>
 * <ul>
 *   <li>{@code kafka:<topic>}: that topic, e.g. {@code kafka:payments};</li>
 *   <li>{@code kafka} alone: the topic mapped to the event type ({@link Builder#topic(String, String)}), else the
 *       {@link Builder#defaultTopic default topic}; with neither, the event is dead at once.</li>
 * </ul>
 *
 * <h2>Records</h2>
 * The key is the aggregate id (UTF-8), so all events of one aggregate go to one partition and keep their order there
 * (the relay's per-aggregate ordering, when on, hands them over one at a time in order; the idempotent producer keeps
 * the order of what it is given). The value is the JSON payload in UTF-8. Headers: {@value #EVENT_ID_HEADER} = the
 * event id (the same on every attempt, so that a {@link KafkaInboxConsumer} drops redeliveries),
 * {@value #EVENT_TYPE_HEADER}, {@value #AGGREGATE_TYPE_HEADER}, {@value #CREATED_AT_HEADER} (epoch milliseconds) and
 * the event's own headers, in UTF-8.
 *
 * <h2>Outcomes</h2>
 * <ul>
 *   <li>Acknowledged by the broker: delivered.</li>
 *   <li>A record the broker will never take (too large, an invalid topic name): dead at once.</li>
 *   <li>Anything else (a missing topic, a broker away, no acknowledgement within {@link Builder#sendTimeout}, default
 *       15 s): retried with the relay's backoff. The producer may still deliver a record it timed out on; the retry
 *       then publishes a second copy with the same event id, which the consumer's inbox drops.</li>
 * </ul>
 * The send timeout bounds the whole {@link #sendAll} call: the producer's {@code max.block.ms} and
 * {@code delivery.timeout.ms} are set from it unless the configuration sets them. After an error that leaves the
 * idempotent producer unusable (fenced, an out-of-order sequence, failed authentication), the transport closes it and
 * the next send opens a new one.
 *
 * <pre>{@code
 * try (KafkaTransport kafka = KafkaTransport.builder(Map.of("bootstrap.servers", "127.0.0.1:9092"))
 *          .name("events").topic("payment.succeeded", "payments").build();
 *      OutboxRelay relay = OutboxRelay.builder(outbox).route("kafka", kafka).build()) {
 *   relay.start();
 *   // events enqueued with .destination("kafka") go to the topic of their type; "kafka:audit" to topic audit
 * }
 * }</pre>
 *
 * <p>Thread-safe: one producer is shared by every relay thread, as Kafka recommends.
 */
public final class KafkaTransport implements OutboxTransport {
  /** The header carrying the outbox event id. */
  public static final String EVENT_ID_HEADER = "idem-event-id";
  /** The header carrying the event type. */
  public static final String EVENT_TYPE_HEADER = "idem-event-type";
  /** The header carrying the aggregate type. */
  public static final String AGGREGATE_TYPE_HEADER = "idem-aggregate-type";
  /** The header carrying when the event was enqueued, in epoch milliseconds. */
  public static final String CREATED_AT_HEADER = "idem-created-at";

  private static final System.Logger LOG = System.getLogger(KafkaTransport.class.getName());
  /** Kafka's own rule for topic names. */
  static final Pattern TOPIC = Pattern.compile("[a-zA-Z0-9._-]{1,249}");
  private static final Duration SLACK = Duration.ofSeconds(1);

  private final String name;
  private final Map<String, Object> producerConfig;
  private final Map<String, String> topicsByType;
  private final String defaultTopic;
  private final Duration sendTimeout;
  private final ReentrantLock producerLock = new ReentrantLock();
  private volatile Producer<String, byte[]> producer;
  private volatile boolean closed;

  private KafkaTransport(Builder b) {
    this.name = b.name;
    this.producerConfig = producerConfig(b.config, b.sendTimeout, b.name);
    this.topicsByType = Map.copyOf(b.topicsByType);
    this.defaultTopic = b.defaultTopic;
    this.sendTimeout = b.sendTimeout;
  }

  /**
   * A transport whose producer is built from {@code config}: at least {@code bootstrap.servers}. Serializers, acks and
   * idempotence are the transport's own; a configuration that contradicts them is refused by {@link Builder#build}.
   */
  public static Builder builder(Map<String, ?> config) {
    return new Builder(config);
  }

  public String name() {
    return name;
  }

  /** The producer configuration in effect (serializers, acks, idempotence and timeouts included). */
  public Map<String, Object> producerConfig() {
    return producerConfig;
  }

  @Override
  public DeliveryResult send(OutboxMessage message) {
    return sendAll(List.of(message)).get(0);
  }

  /**
   * Hands every message to the producer without waiting, then waits for the acknowledgements, together at most the
   * send timeout.
   */
  @Override
  public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
    DeliveryResult[] results = new DeliveryResult[messages.size()];
    List<CompletableFuture<Void>> acks = new ArrayList<>(messages.size());
    long deadline = System.nanoTime() + sendTimeout.plus(SLACK).toNanos();
    Producer<String, byte[]> p;
    try {
      p = producer();
    } catch (RuntimeException e) {
      String error = "transport " + name + " cannot create its Kafka producer: " + OutboxTransport.describe(e);
      LOG.log(System.Logger.Level.WARNING, error);
      java.util.Arrays.fill(results, DeliveryResult.retry(error, null));
      return List.of(results);
    }
    for (int i = 0; i < messages.size(); i++) {
      OutboxMessage m = messages.get(i);
      String topic = topicOf(m);
      if (topic == null) {
        results[i] = DeliveryResult.permanent("no Kafka topic for destination '" + m.destination() + "' and event type '"
            + m.type() + "': name one in the destination (kafka:<topic>), map the type or set a default topic", null);
        acks.add(null);
        continue;
      }
      if (!TOPIC.matcher(topic).matches()) {
        results[i] = DeliveryResult.permanent("'" + topic + "' is not a Kafka topic name ([a-zA-Z0-9._-], at most 249)",
            null);
        acks.add(null);
        continue;
      }
      CompletableFuture<Void> ack = new CompletableFuture<>();
      acks.add(ack);
      try {
        p.send(record(topic, m), (metadata, error) -> {
          if (error == null) {
            ack.complete(null);
          } else {
            ack.completeExceptionally(error);
          }
        });
      } catch (InterruptException e) {
        Thread.interrupted(); // Kafka set the flag again; restored below, once the batch has its results
        ack.completeExceptionally(e);
        fillRemaining(results, i + 1, messages.size(), "interrupted before sending");
        Thread.currentThread().interrupt();
        break;
      } catch (RuntimeException e) {
        ack.completeExceptionally(e);
      }
    }
    for (int i = 0; i < results.length; i++) {
      if (results[i] != null) {
        continue;
      }
      CompletableFuture<Void> ack = acks.get(i);
      try {
        ack.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        results[i] = DeliveryResult.delivered();
      } catch (TimeoutException e) {
        results[i] = DeliveryResult.retry("no acknowledgement from Kafka within " + sendTimeout, null);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        fillRemaining(results, i, results.length, "interrupted while waiting for the acknowledgement");
        break;
      } catch (ExecutionException e) {
        results[i] = failure(e.getCause());
      }
    }
    return List.of(results);
  }

  private static void fillRemaining(DeliveryResult[] results, int from, int to, String error) {
    for (int j = from; j < to; j++) {
      if (results[j] == null) {
        results[j] = DeliveryResult.retry(error, null);
      }
    }
  }

  private DeliveryResult failure(Throwable error) {
    String text = OutboxTransport.describe(error);
    if (error instanceof RecordTooLargeException || error instanceof RecordBatchTooLargeException
        || error instanceof InvalidTopicException) {
      return DeliveryResult.permanent(text, null);
    }
    if (error instanceof ProducerFencedException || error instanceof OutOfOrderSequenceException
        || error instanceof UnknownProducerIdException || error instanceof AuthenticationException
        || error instanceof IllegalStateException || error.getClass() == KafkaException.class) {
      // the idempotent producer's state is lost (or it was closed): its later sends would fail the same way
      discard(error);
    }
    return DeliveryResult.retry(text, null);
  }

  /** Closes the current producer after a fatal error; the next send opens another. */
  private void discard(Throwable cause) {
    producerLock.lock();
    try {
      Producer<String, byte[]> p = producer;
      if (p != null) {
        producer = null;
        LOG.log(System.Logger.Level.WARNING, "transport " + name + ": the Kafka producer is unusable ("
            + OutboxTransport.describe(cause) + "); opening a new one for the next send");
        closeQuietly(p, Duration.ZERO);
      }
    } finally {
      producerLock.unlock();
    }
  }

  private Producer<String, byte[]> producer() {
    Producer<String, byte[]> p = producer;
    if (p != null) {
      return p;
    }
    producerLock.lock();
    try {
      if (closed) {
        throw new IllegalStateException("transport " + name + " is closed");
      }
      if (producer == null) {
        producer = new KafkaProducer<>(new HashMap<>(producerConfig));
      }
      return producer;
    } finally {
      producerLock.unlock();
    }
  }

  private String topicOf(OutboxMessage m) {
    String detail = m.destinationDetail();
    if (!detail.isEmpty()) {
      return detail;
    }
    String mapped = topicsByType.get(m.type());
    return mapped != null ? mapped : defaultTopic;
  }

  static ProducerRecord<String, byte[]> record(String topic, OutboxMessage m) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(EVENT_ID_HEADER, utf8(m.id().toString()));
    headers.add(EVENT_TYPE_HEADER, utf8(m.type()));
    headers.add(AGGREGATE_TYPE_HEADER, utf8(m.aggregateType()));
    headers.add(CREATED_AT_HEADER, utf8(Long.toString(m.createdAt().toEpochMilli())));
    for (Map.Entry<String, String> h : m.headers().entrySet()) {
      headers.add(h.getKey(), utf8(h.getValue()));
    }
    return new ProducerRecord<>(topic, null, m.aggregateId(), utf8(m.payload()), headers);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Flushes what is in flight (at most the send timeout) and closes the producer. */
  @Override
  public void close() {
    producerLock.lock();
    try {
      closed = true;
      Producer<String, byte[]> p = producer;
      producer = null;
      if (p != null) {
        closeQuietly(p, sendTimeout);
      }
    } finally {
      producerLock.unlock();
    }
  }

  private void closeQuietly(Producer<String, byte[]> p, Duration timeout) {
    try {
      p.close(timeout);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "transport " + name + ": closing the producer failed", e);
    }
  }

  @Override
  public String toString() {
    return "KafkaTransport{" + name + '}';
  }

  static Map<String, Object> producerConfig(Map<String, Object> given, Duration sendTimeout, String name) {
    Map<String, Object> c = new LinkedHashMap<>(given);
    if (!c.containsKey(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
      throw new IllegalArgumentException("the producer configuration of transport " + name + " needs "
          + ProducerConfig.BOOTSTRAP_SERVERS_CONFIG);
    }
    require(c, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true", name);
    require(c, ProducerConfig.ACKS_CONFIG, "all", "-1", name);
    Object inFlight = c.get(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION);
    if (inFlight != null && Integer.parseInt(inFlight.toString().trim()) > 5) {
      throw new IllegalArgumentException(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION + " must be at most 5"
          + " for an idempotent producer to keep order, got " + inFlight + " (transport " + name + ")");
    }
    for (String key : List.of(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
        ProducerConfig.TRANSACTIONAL_ID_CONFIG)) {
      if (c.containsKey(key)) {
        throw new IllegalArgumentException(key + " is the transport's own (string keys, byte values, no"
            + " transactions): remove it from the configuration of transport " + name);
      }
    }
    c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    c.put(ProducerConfig.ACKS_CONFIG, "all");
    c.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "idem-outbox-" + name);
    int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, sendTimeout.toMillis());
    c.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeoutMillis);
    if (!c.containsKey(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG)) {
      // Kafka wants delivery.timeout.ms >= linger.ms + request.timeout.ms
      int linger = Integer.parseInt(String.valueOf(c.getOrDefault(ProducerConfig.LINGER_MS_CONFIG, "5")).trim());
      c.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, linger);
      int request = c.containsKey(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG)
          ? Integer.parseInt(c.get(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG).toString().trim())
          : Math.max(1, Math.min(30_000, timeoutMillis - linger));
      c.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, request);
      c.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, Math.max(timeoutMillis, linger + request));
    }
    return Map.copyOf(c);
  }

  private static void require(Map<String, Object> c, String key, String expected, String name) {
    require(c, key, expected, expected, name);
  }

  private static void require(Map<String, Object> c, String key, String expected, String alias, String name) {
    Object value = c.get(key);
    if (value != null && !expected.equalsIgnoreCase(value.toString().trim())
        && !alias.equalsIgnoreCase(value.toString().trim())) {
      throw new IllegalArgumentException(key + " must be " + expected + " for exactly-once delivery, got '" + value
          + "' (transport " + name + ")");
    }
  }

  /** Builds a {@link KafkaTransport}. Not thread-safe. */
  public static final class Builder {
    private final Map<String, Object> config;
    private final Map<String, String> topicsByType = new HashMap<>();
    private String name = "kafka";
    private String defaultTopic;
    private Duration sendTimeout = Duration.ofSeconds(15);

    private Builder(Map<String, ?> config) {
      Objects.requireNonNull(config, "config");
      this.config = new LinkedHashMap<>();
      config.forEach((k, v) -> this.config.put(Objects.requireNonNull(k, "configuration key"),
          Objects.requireNonNull(v, () -> "value of " + k)));
    }

    /** The name in log lines and errors (default {@code kafka}). */
    public Builder name(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank() || name.length() > 64) {
        throw new IllegalArgumentException("name must be 1 to 64 characters, got '" + name + "'");
      }
      this.name = name;
      return this;
    }

    /** Sends events of {@code eventType} to {@code topic} when their destination names no topic. */
    public Builder topic(String eventType, String topic) {
      Objects.requireNonNull(eventType, "eventType");
      topicsByType.put(eventType, checkTopic(topic));
      return this;
    }

    /** The topic of events whose destination names none and whose type has no topic of its own. */
    public Builder defaultTopic(String topic) {
      this.defaultTopic = checkTopic(topic);
      return this;
    }

    /** How long one {@link #sendAll} may wait for the broker's acknowledgements (default 15 s, 1 s to 5 min). */
    public Builder sendTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "sendTimeout");
      if (timeout.compareTo(Duration.ofSeconds(1)) < 0 || timeout.compareTo(Duration.ofMinutes(5)) > 0) {
        throw new IllegalArgumentException("sendTimeout must be 1 s to 5 min, got " + timeout);
      }
      this.sendTimeout = timeout;
      return this;
    }

    /**
     * Builds the transport; the producer itself connects on the first send.
     *
     * @throws IllegalArgumentException when the configuration lacks {@code bootstrap.servers} or contradicts
     *     exactly-once delivery ({@code acks} other than all, idempotence off, more than 5 requests in flight, its own
     *     serializers or a transactional id)
     */
    public KafkaTransport build() {
      return new KafkaTransport(this);
    }

    static String checkTopic(String topic) {
      Objects.requireNonNull(topic, "topic");
      if (!TOPIC.matcher(topic).matches() || topic.equals(".") || topic.equals("..")) {
        throw new IllegalArgumentException("'" + topic + "' is not a Kafka topic name ([a-zA-Z0-9._-], at most 249)");
      }
      return topic;
    }
  }
}
