package dev.idem.kafka;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.types.Password;
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
 * the order of what it is given). The value is the JSON payload in UTF-8. Headers, in UTF-8: first the event's own,
 * then {@value #EVENT_ID_HEADER} = the event id (the same on every attempt, so that a {@link KafkaInboxConsumer} drops
 * redeliveries), {@value #EVENT_TYPE_HEADER}, {@value #AGGREGATE_TYPE_HEADER} and {@value #CREATED_AT_HEADER} (epoch
 * milliseconds). An event header with one of these four names (in any case) is not sent: the transport's headers are
 * the only ones under these names, so that no event can pass for another.
 *
 * <h2>Outcomes</h2>
 * <ul>
 *   <li>Acknowledged by the broker: delivered.</li>
 *   <li>A record the broker will never take (too large, an invalid topic name): dead at once.</li>
 *   <li>Anything else (a missing topic, a broker away, no acknowledgement within {@link Builder#sendTimeout}, default
 *       15 s): retried with the relay's backoff. The producer may still deliver a record it timed out on; the retry
 *       then publishes a second copy with the same event id, which the consumer's inbox drops.</li>
 * </ul>
 *
 * <h2>Time</h2>
 * One {@link #sendAll} call has one deadline, the send timeout after its start, so that it ends well inside the relay's
 * lease when the send timeout is well under it. The producer blocks the sending thread up to
 * {@code max.block.ms} (by default the send timeout) while it waits for a topic's metadata, and so up to that long for
 * every record of a missing topic; so the call looks each topic of the batch up on a background thread
 * ({@code partitionsFor}, one lookup per topic shared by concurrent calls), hands a topic's records to the producer, in
 * their order, once its lookup has succeeded, and stops waiting at the deadline. A topic whose lookup has failed does
 * not hold the others back. A record not handed over by the deadline is retried as not sent ("the send timeout
 * passed"), and so is one handed over but not acknowledged. The one wait the call cannot cut short is a send that
 * blocks although its topic's metadata was found, because the producer's {@code buffer.memory} is full or the metadata
 * expired in between: Kafka bounds it by {@code max.block.ms}, and no send starts after the deadline, so a call takes
 * at most the send timeout plus one {@code max.block.ms} (plus creating the producer on the first call). The
 * producer's {@code delivery.timeout.ms} and {@code request.timeout.ms} also follow the send timeout unless the
 * configuration sets them.
 *
 * <h2>Producer replacement</h2>
 * After an error that leaves the idempotent producer unusable (fenced, an out-of-order sequence, failed
 * authentication, closed), the transport sets that producer aside, closes it on a background thread (waiting up to the
 * send timeout for what it has in flight) and the next send opens a new one. An error from a producer already set aside
 * leaves the current one alone, so that the records other threads had in flight on the old producer do not replace the
 * new one as well.
 *
 * <h2>Configuration</h2>
 * {@link Builder#build} checks the whole producer configuration as Kafka would on the first send, and the
 * idempotent producer's needs ({@code retries} at least 1, at most 5 requests in flight per connection, {@code acks}
 * all), and refuses a bad one with an {@link IllegalArgumentException} naming the setting and the transport. Values of
 * secrets (Kafka's password settings, any setting whose name contains {@code password}, {@code jaas} or
 * {@code secret}) appear in none of the transport's messages or log lines, nor in {@link #producerConfig()} (Kafka's
 * own log of the producer configuration hides its password settings, which include all of these it knows).
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
  /** The transport's header names, in lower case. */
  private static final Set<String> RESERVED_HEADERS =
      Set.of(EVENT_ID_HEADER, EVENT_TYPE_HEADER, AGGREGATE_TYPE_HEADER, CREATED_AT_HEADER);
  /** What {@link #producerConfig()} shows in place of a secret. */
  static final String HIDDEN = "[hidden]";
  private static final Map<String, ConfigDef.ConfigKey> PRODUCER_SETTINGS = ProducerConfig.configDef().configKeys();

  private final String name;
  private final Map<String, Object> producerConfig;
  private final Map<String, Object> shownConfig;
  private final Map<String, String> topicsByType;
  private final String defaultTopic;
  private final Duration sendTimeout;
  /** Runs the metadata lookups and closes the producers set aside. */
  private final ExecutorService background;
  private final ReentrantLock producerLock = new ReentrantLock();
  private final AtomicInteger producersOpened = new AtomicInteger();
  private volatile OpenProducer current;
  private volatile boolean closed;

  private KafkaTransport(Builder b) {
    this.name = b.name;
    this.producerConfig = producerConfig(b.config, b.sendTimeout, b.name);
    Map<String, Object> shown = new LinkedHashMap<>();
    producerConfig.forEach((k, v) -> shown.put(k, secret(k) ? HIDDEN : v));
    this.shownConfig = Collections.unmodifiableMap(shown);
    this.topicsByType = Map.copyOf(b.topicsByType);
    this.defaultTopic = b.defaultTopic;
    this.sendTimeout = b.sendTimeout;
    AtomicInteger threads = new AtomicInteger();
    this.background = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "idem-kafka-" + b.name + "-" + threads.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
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

  /**
   * The producer configuration in effect (serializers, acks, idempotence and timeouts included), with the value of
   * every secret shown as {@code [hidden]}.
   */
  public Map<String, Object> producerConfig() {
    return shownConfig;
  }

  @Override
  public DeliveryResult send(OutboxMessage message) {
    return sendAll(List.of(message)).get(0);
  }

  /**
   * Hands the messages to the producer, each topic's in order as soon as the producer has the topic's metadata, then
   * waits for the acknowledgements, until one send timeout after the call started (see "Time" in the class comment for
   * the one exception).
   */
  @Override
  public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
    long deadline = System.nanoTime() + sendTimeout.toNanos();
    int n = messages.size();
    DeliveryResult[] results = new DeliveryResult[n];
    String[] topics = new String[n];
    Map<String, List<Integer>> byTopic = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      OutboxMessage m = messages.get(i);
      String topic = topicOf(m);
      if (topic == null) {
        results[i] = DeliveryResult.permanent("no Kafka topic for destination '" + m.destination()
            + "' and event type '" + m.type() + "': name one in the destination (kafka:<topic>), map the type or set a"
            + " default topic", null);
      } else if (!TOPIC.matcher(topic).matches()) {
        results[i] = DeliveryResult.permanent("'" + topic + "' is not a Kafka topic name ([a-zA-Z0-9._-], at most 249)",
            null);
      } else {
        topics[i] = topic;
        byTopic.computeIfAbsent(topic, t -> new ArrayList<>()).add(i);
      }
    }
    if (byTopic.isEmpty()) {
      return List.of(results);
    }
    OpenProducer p;
    try {
      p = open();
    } catch (RuntimeException e) {
      String error = "transport " + name + " cannot create its Kafka producer: " + OutboxTransport.describe(e);
      LOG.log(System.Logger.Level.WARNING, error);
      fillUnset(results, DeliveryResult.retry(error, null));
      return List.of(results);
    }
    Map<String, CompletableFuture<Void>> lookups = new HashMap<>();
    byTopic.keySet().forEach(topic -> lookups.put(topic, p.metadata(topic, background)));
    List<CompletableFuture<Void>> acks = new ArrayList<>(Collections.nCopies(n, null));
    boolean interrupted = false;
    try {
      handOver(messages, byTopic, lookups, p, deadline, results, acks);
    } catch (InterruptedException e) {
      interrupted = true;
    }
    for (int i = 0; i < n; i++) {
      if (results[i] == null && acks.get(i) == null) {
        results[i] = DeliveryResult.retry(interrupted ? "not sent: interrupted before sending"
            : !lookups.get(topics[i]).isDone() ? "not sent: the send timeout (" + sendTimeout + ") passed before Kafka"
                + " had the metadata of topic '" + topics[i] + "' (does it exist?)"
            : "not sent: the send timeout (" + sendTimeout + ") passed", null);
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt(); // restored now that the batch has its results; acks not in yet become retries
    }
    for (int i = 0; i < n; i++) {
      if (results[i] == null) {
        results[i] = acknowledgement(acks.get(i), p, deadline);
      }
    }
    return List.of(results);
  }

  /**
   * Sends the records of each topic whose lookup has ended, until all are sent or the deadline passes; a topic whose
   * lookup failed gets that failure for all its messages.
   */
  private void handOver(List<OutboxMessage> messages, Map<String, List<Integer>> byTopic,
      Map<String, CompletableFuture<Void>> lookups, OpenProducer p, long deadline, DeliveryResult[] results,
      List<CompletableFuture<Void>> acks) throws InterruptedException {
    Map<String, List<Integer>> waiting = new LinkedHashMap<>(byTopic);
    while (!waiting.isEmpty()) {
      boolean progressed = false;
      for (Iterator<Map.Entry<String, List<Integer>>> it = waiting.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, List<Integer>> topic = it.next();
        CompletableFuture<Void> lookup = lookups.get(topic.getKey());
        if (!lookup.isDone()) {
          continue;
        }
        it.remove();
        progressed = true;
        Throwable lookupError = errorOf(lookup);
        if (lookupError != null) {
          DeliveryResult failed = failure(lookupError, p);
          topic.getValue().forEach(i -> results[i] = failed);
          continue;
        }
        for (int i : topic.getValue()) {
          if (System.nanoTime() - deadline >= 0) {
            return;
          }
          acks.set(i, send(p, topic.getKey(), messages.get(i)));
        }
      }
      if (!progressed) {
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
          return;
        }
        CompletableFuture<?>[] pending = waiting.keySet().stream().map(lookups::get)
            .toArray(CompletableFuture<?>[]::new);
        try {
          CompletableFuture.anyOf(pending).get(remaining, TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
          // a lookup has failed (seen on the next pass) or the deadline has passed (seen below)
        }
      }
    }
  }

  /** Hands one record to the producer; the future completes with the broker's acknowledgement or the error. */
  private static CompletableFuture<Void> send(OpenProducer p, String topic, OutboxMessage m)
      throws InterruptedException {
    CompletableFuture<Void> ack = new CompletableFuture<>();
    try {
      p.producer.send(record(topic, m), (metadata, error) -> {
        if (error == null) {
          ack.complete(null);
        } else {
          ack.completeExceptionally(error);
        }
      });
    } catch (InterruptException e) {
      Thread.interrupted(); // Kafka set the flag again; the caller restores it once the batch has its results
      InterruptedException interrupted = new InterruptedException("interrupted while handing a record to Kafka");
      interrupted.initCause(e);
      throw interrupted;
    } catch (RuntimeException e) {
      ack.completeExceptionally(e);
    }
    return ack;
  }

  private DeliveryResult acknowledgement(CompletableFuture<Void> ack, OpenProducer p, long deadline) {
    try {
      ack.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      return DeliveryResult.delivered();
    } catch (TimeoutException e) {
      return DeliveryResult.retry("no acknowledgement from Kafka within " + sendTimeout, null);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // so that the next acknowledgement not in yet fails fast too
      return DeliveryResult.retry("interrupted while waiting for the acknowledgement", null);
    } catch (ExecutionException e) {
      return failure(e.getCause(), p);
    }
  }

  private static Throwable errorOf(CompletableFuture<Void> done) {
    try {
      done.getNow(null);
      return null;
    } catch (CompletionException | CancellationException e) {
      return e.getCause() != null ? e.getCause() : e;
    }
  }

  private static void fillUnset(DeliveryResult[] results, DeliveryResult result) {
    for (int j = 0; j < results.length; j++) {
      if (results[j] == null) {
        results[j] = result;
      }
    }
  }

  /**
   * The result of a failed send or lookup on {@code p}; sets {@code p} aside when the error leaves it unusable and it
   * is still the current producer.
   */
  DeliveryResult failure(Throwable error, OpenProducer p) {
    String text = OutboxTransport.describe(error);
    if (error instanceof RecordTooLargeException || error instanceof RecordBatchTooLargeException
        || error instanceof InvalidTopicException) {
      return DeliveryResult.permanent(text, null);
    }
    if (error instanceof ProducerFencedException || error instanceof OutOfOrderSequenceException
        || error instanceof UnknownProducerIdException || error instanceof AuthenticationException
        || error instanceof IllegalStateException || error.getClass() == KafkaException.class) {
      // the idempotent producer's state is lost (or it was closed): its later sends would fail the same way
      discard(p, error);
    }
    return DeliveryResult.retry(text, null);
  }

  /**
   * Sets {@code p} aside if it is still the current producer, and closes it in the background; the next send opens
   * another. An error of a producer already set aside (its records failing as it closes) says nothing of the current.
   */
  private void discard(OpenProducer p, Throwable cause) {
    producerLock.lock();
    try {
      if (current != p) {
        return;
      }
      current = null;
    } finally {
      producerLock.unlock();
    }
    LOG.log(System.Logger.Level.WARNING, "transport " + name + ": the Kafka producer is unusable ("
        + OutboxTransport.describe(cause) + "); closing it and opening a new one for the next send");
    try {
      background.execute(() -> closeQuietly(p.producer, sendTimeout));
    } catch (RejectedExecutionException e) {
      closeQuietly(p.producer, Duration.ZERO); // the transport is closing
    }
  }

  private OpenProducer open() {
    OpenProducer p = current;
    if (p != null) {
      return p;
    }
    producerLock.lock();
    try {
      if (closed) {
        throw new IllegalStateException("transport " + name + " is closed");
      }
      if (current == null) {
        current = new OpenProducer(new KafkaProducer<>(new HashMap<>(producerConfig)));
        producersOpened.incrementAndGet();
      }
      return current;
    } finally {
      producerLock.unlock();
    }
  }

  /** The current producer, {@code null} when none is open. */
  OpenProducer currentProducer() {
    return current;
  }

  /** How many producers this transport has opened. */
  int producersOpened() {
    return producersOpened.get();
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
    for (Map.Entry<String, String> h : m.headers().entrySet()) {
      if (!RESERVED_HEADERS.contains(h.getKey().toLowerCase(Locale.ROOT))) {
        headers.add(h.getKey(), utf8(h.getValue()));
      }
    }
    headers.add(EVENT_ID_HEADER, utf8(m.id().toString()));
    headers.add(EVENT_TYPE_HEADER, utf8(m.type()));
    headers.add(AGGREGATE_TYPE_HEADER, utf8(m.aggregateType()));
    headers.add(CREATED_AT_HEADER, utf8(Long.toString(m.createdAt().toEpochMilli())));
    return new ProducerRecord<>(topic, null, m.aggregateId(), utf8(m.payload()), headers);
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Flushes what is in flight and closes the producer, then waits for the producers set aside to close: together at
   * most about the send timeout.
   */
  @Override
  public void close() {
    long deadline = System.nanoTime() + sendTimeout.toNanos();
    OpenProducer p;
    producerLock.lock();
    try {
      closed = true;
      p = current;
      current = null;
    } finally {
      producerLock.unlock();
    }
    if (p != null) {
      closeQuietly(p.producer, sendTimeout);
    }
    background.shutdown();
    try {
      if (!background.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
        background.shutdownNow();
      }
    } catch (InterruptedException e) {
      background.shutdownNow();
      Thread.currentThread().interrupt();
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

  /** One producer with the topic lookups under way on it. */
  static final class OpenProducer {
    final Producer<String, byte[]> producer;
    private final Map<String, CompletableFuture<Void>> lookups = new ConcurrentHashMap<>();

    OpenProducer(Producer<String, byte[]> producer) {
      this.producer = producer;
    }

    /**
     * Completes once the producer has the topic's metadata, so that a send to it does not wait for metadata. The
     * lookup ({@code partitionsFor}, which blocks up to {@code max.block.ms}) runs on {@code executor}, one at a time
     * per topic whoever asks; for a topic the producer knows it ends at once.
     */
    CompletableFuture<Void> metadata(String topic, Executor executor) {
      CompletableFuture<Void> lookup = lookups.computeIfAbsent(topic, t -> {
        try {
          return CompletableFuture.runAsync(() -> producer.partitionsFor(t), executor);
        } catch (RejectedExecutionException e) {
          return CompletableFuture.failedFuture(new IllegalStateException("the transport is closing", e));
        }
      });
      lookup.whenComplete((v, e) -> lookups.remove(topic, lookup));
      return lookup;
    }
  }

  static Map<String, Object> producerConfig(Map<String, Object> given, Duration sendTimeout, String name) {
    Map<String, Object> c = new LinkedHashMap<>(given);
    if (!c.containsKey(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG)) {
      throw new IllegalArgumentException("the producer configuration of transport " + name + " needs "
          + ProducerConfig.BOOTSTRAP_SERVERS_CONFIG);
    }
    for (String key : List.of(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG,
        ProducerConfig.TRANSACTIONAL_ID_CONFIG)) {
      if (c.containsKey(key)) {
        throw new IllegalArgumentException(key + " is the transport's own (string keys, byte values, no"
            + " transactions): remove it from the configuration of transport " + name);
      }
    }
    c.forEach((key, value) -> {
      // Kafka's message for a value of the wrong type shows the value
      if (secret(key) && !(value instanceof String) && !(value instanceof Password)) {
        throw new IllegalArgumentException(key + " must be a string, got a " + value.getClass().getName()
            + " (transport " + name + ")");
      }
    });
    require(c, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, name, "true");
    require(c, ProducerConfig.ACKS_CONFIG, name, "all", "-1");
    Long inFlight = number(c.get(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION));
    if (inFlight != null && inFlight > 5) {
      throw new IllegalArgumentException(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION + " must be at most 5"
          + " for an idempotent producer to keep order, got " + inFlight + " (transport " + name + ")");
    }
    Long retries = number(c.get(ProducerConfig.RETRIES_CONFIG));
    if (retries != null && retries < 1) {
      throw new IllegalArgumentException(ProducerConfig.RETRIES_CONFIG + " must be at least 1 for an idempotent"
          + " producer, got " + retries + " (transport " + name + ")");
    }
    c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    c.put(ProducerConfig.ACKS_CONFIG, "all");
    c.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "idem-outbox-" + name);
    int timeoutMillis = (int) Math.min(Integer.MAX_VALUE, sendTimeout.toMillis());
    c.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeoutMillis);
    ProducerConfig parsed;
    try {
      parsed = new ProducerConfig(c);
    } catch (KafkaException e) { // ConfigException among others; its message names the setting
      throw new IllegalArgumentException("the producer configuration of transport " + name + " is invalid: "
          + e.getMessage(), e);
    }
    // KafkaProducer wants delivery.timeout.ms >= linger.ms + request.timeout.ms, and checks it only on the first send
    long linger = parsed.getLong(ProducerConfig.LINGER_MS_CONFIG);
    boolean deliveryGiven = c.containsKey(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG);
    long delivery = deliveryGiven ? parsed.getInt(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG) : timeoutMillis;
    long request;
    if (c.containsKey(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG)) {
      request = parsed.getInt(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG);
    } else {
      request = Math.max(1, Math.min(30_000, delivery - linger));
      c.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) request);
    }
    if (!deliveryGiven) {
      delivery = Math.max(delivery, linger + request);
      if (delivery > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(ProducerConfig.LINGER_MS_CONFIG + " + "
            + ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG + " must be at most " + Integer.MAX_VALUE + " ms, got " + linger
            + " + " + request + " (transport " + name + ")");
      }
      c.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) delivery);
    } else if (delivery < linger + request) {
      throw new IllegalArgumentException(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG + " must be at least "
          + ProducerConfig.LINGER_MS_CONFIG + " + " + ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG + " (" + linger + " + "
          + request + " ms), got " + delivery + " (transport " + name + ")");
    }
    return Map.copyOf(c);
  }

  /** Whether the value of {@code key} is a secret: a Kafka password setting, or a name that says so. */
  static boolean secret(String key) {
    String k = key.toLowerCase(Locale.ROOT);
    if (k.contains("password") || k.contains("jaas") || k.contains("secret")) {
      return true;
    }
    ConfigDef.ConfigKey setting = PRODUCER_SETTINGS.get(key);
    return setting != null && setting.type == ConfigDef.Type.PASSWORD;
  }

  /** A whole number given as a number or a string, else {@code null} (left for Kafka to refuse). */
  private static Long number(Object value) {
    if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
      return ((Number) value).longValue();
    }
    if (value instanceof String s) {
      try {
        return Long.parseLong(s.trim());
      } catch (NumberFormatException e) {
        return null;
      }
    }
    return null;
  }

  /** Refuses a value of {@code key} other than {@code allowed} (ignoring case; numbers and booleans as text). */
  private static void require(Map<String, Object> c, String key, String name, String... allowed) {
    Object value = c.get(key);
    if (value == null) {
      return;
    }
    String text = value.toString().trim();
    for (String a : allowed) {
      if (a.equalsIgnoreCase(text)) {
        return;
      }
    }
    throw new IllegalArgumentException(key + " must be " + allowed[0] + " for exactly-once delivery, got '" + value
        + "' (transport " + name + ")");
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

    /**
     * How long one {@link #sendAll} may take, handing the records over and waiting for the broker's acknowledgements
     * (default 15 s, 1 s to 5 min). Keep it well under the relay's lease.
     */
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
     * @throws IllegalArgumentException when the configuration lacks {@code bootstrap.servers}, contradicts
     *     exactly-once delivery ({@code acks} other than all, idempotence off, {@code retries} 0, more than 5 requests
     *     in flight, its own serializers or a transactional id) or is one Kafka would refuse (a value of the wrong
     *     type, {@code delivery.timeout.ms} below {@code linger.ms + request.timeout.ms}); the message names the
     *     setting
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
