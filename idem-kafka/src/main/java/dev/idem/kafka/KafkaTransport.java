package dev.idem.kafka;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxTransport;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
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
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.errors.ApiException;
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
 * lease when the send timeout is well under it. The producer blocks the sending thread up to {@code max.block.ms} (by
 * default the send timeout) while it waits for a topic's metadata, for every record of a missing topic; so the call
 * first looks each topic up on a background thread ({@code partitionsFor}, one lookup per topic shared by concurrent
 * calls), hands the topic's records to the producer, in their order, once its lookup has succeeded, and stops waiting
 * at the deadline. A topic looked up once on the current producer needs no further lookup.
 *
 * <p>The lookups run on at most {@value #LOOKUP_THREADS} daemon threads per transport (named
 * {@code idem-kafka-<name>-lookup-<n>}; idle ones end after 30 s, all of them on {@link #close}), with at most
 * {@value #LOOKUP_QUEUE} more waiting; a call whose lookup finds the queue full asks again until its deadline, and a
 * queued lookup that cannot start before the deadline of every call waiting for it is dropped without running. A
 * failed lookup (a missing topic, a broker away, no authorization) puts the topic in a negative cache for one send
 * timeout, during which its messages are retried at once without a lookup ({@code metadata for topic 'X' unavailable:
 * <cause>, not retried before <time>}); a successful lookup of the topic (one already under way) clears the entry.
 *
 * <p>A record not handed over by the deadline is retried as not sent ("the send timeout passed", saying what its
 * topic's lookup was waiting for), and so is one handed over but not acknowledged. The one wait the call cannot cut
 * short is a send that blocks although its topic's metadata was found ({@code buffer.memory} full, or the metadata
 * expired in between): Kafka bounds it by {@code max.block.ms}, the topic's other records of the batch are then retried
 * unsent, and no send starts after the deadline, so a call takes at most the send timeout plus one
 * {@code max.block.ms} (plus creating the producer on the first call). The producer's {@code delivery.timeout.ms} and
 * {@code request.timeout.ms} also follow the send timeout unless the configuration sets them.
 *
 * <h2>Producer replacement</h2>
 * After an error that leaves the idempotent producer unusable (fenced, an out-of-order sequence, failed authentication,
 * closed), the transport sets it aside, closes it on a background thread (waiting up to the send timeout for what it
 * has in flight), and the next send opens a new one. Errors from a producer already set aside leave the current alone.
 *
 * <h2>Configuration</h2>
 * {@link Builder#build} checks the idempotent producer's needs ({@code retries} at least 1, at most 5 requests in
 * flight per connection, {@code acks} all), then creates a producer from the final configuration and closes it at once
 * (creating one connects to nothing), so that whatever Kafka checks then is checked there: the values and their types
 * ({@code delivery.timeout.ms} at least {@code linger.ms + request.timeout.ms}), the form of {@code bootstrap.servers},
 * the classes it loads (interceptors, partitioner, metric reporters), the security settings (JAAS configuration, SASL
 * mechanism, key and trust stores). A bad configuration is refused with an {@link IllegalArgumentException} naming the
 * transport and the setting, or carrying Kafka's message and that of the root cause. Not checked: that the brokers can
 * be reached, and that the host names in {@code bootstrap.servers} resolve (one that does not resolve yet is logged;
 * sends are retried until it does). Should creating the producer on the first send fail nonetheless, the messages are
 * retried with the root cause in the error and in the log line. Values of secrets (Kafka's password settings, any
 * setting whose name contains {@code password}, {@code jaas} or {@code secret}) appear in none of the transport's
 * messages or log lines, nor in {@link #producerConfig()}.
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
  /** At most this many metadata lookups run at a time, each on a thread of its own. */
  static final int LOOKUP_THREADS = 4;
  /** At most this many lookups wait for a thread; a topic whose lookup finds the queue full asks again later. */
  static final int LOOKUP_QUEUE = 32;
  /** The negative cache holds at most about this many topics before its expired entries are dropped. */
  private static final int UNAVAILABLE_PURGE_SIZE = 1024;

  private final String name;
  private final Map<String, Object> producerConfig;
  private final Map<String, Object> shownConfig;
  private final Map<String, String> topicsByType;
  private final String defaultTopic;
  private final Duration sendTimeout;
  /** Runs the metadata lookups: at most {@link #LOOKUP_THREADS} threads and {@link #LOOKUP_QUEUE} waiting. */
  private final ThreadPoolExecutor lookupPool;
  /** Closes the producers set aside. */
  private final ExecutorService background;
  /** Topics whose last metadata lookup failed, until their entry expires (the negative cache). */
  private final Map<String, Unavailable> unavailable = new ConcurrentHashMap<>();
  private final ReentrantLock producerLock = new ReentrantLock();
  private final AtomicInteger producersOpened = new AtomicInteger();
  private volatile OpenProducer current;
  private volatile boolean closed;

  private KafkaTransport(Builder b, Map<String, Object> producerConfig) {
    this.name = b.name;
    this.producerConfig = producerConfig;
    Map<String, Object> shown = new LinkedHashMap<>();
    producerConfig.forEach((k, v) -> shown.put(k, secret(k) ? HIDDEN : v));
    this.shownConfig = Collections.unmodifiableMap(shown);
    this.topicsByType = Map.copyOf(b.topicsByType);
    this.defaultTopic = b.defaultTopic;
    this.sendTimeout = b.sendTimeout;
    this.lookupPool = new ThreadPoolExecutor(LOOKUP_THREADS, LOOKUP_THREADS, 30, TimeUnit.SECONDS,
        new ArrayBlockingQueue<>(LOOKUP_QUEUE), daemonThreads("idem-kafka-" + b.name + "-lookup-"));
    lookupPool.allowCoreThreadTimeOut(true);
    this.background = Executors.newCachedThreadPool(daemonThreads("idem-kafka-" + b.name + "-close-"));
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger threads = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + threads.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
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
      String error = "transport " + name + " cannot create its Kafka producer: "
          + hideSecrets(causes(e), producerConfig);
      LOG.log(System.Logger.Level.WARNING, error);
      DeliveryResult retry = DeliveryResult.retry(error, null);
      Arrays.setAll(results, i -> results[i] != null ? results[i] : retry);
      return List.of(results);
    }
    Map<String, Lookup> lookups = new HashMap<>();
    List<CompletableFuture<Void>> acks = new ArrayList<>(Collections.nCopies(n, null));
    boolean interrupted = false;
    try {
      handOver(messages, byTopic, lookups, p, deadline, results, acks);
    } catch (InterruptedException e) {
      interrupted = true;
    }
    for (int i = 0; i < n; i++) {
      if (results[i] == null && acks.get(i) == null) {
        results[i] = interrupted ? DeliveryResult.retry("not sent: interrupted before sending", null)
            : notSent(topics[i], lookups.get(topics[i]), p);
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt(); // restored now that the batch has its results; acks not in yet become retries
    }
    Arrays.setAll(results, i -> results[i] != null ? results[i] : acknowledgement(acks.get(i), p, deadline));
    return List.of(results);
  }

  /**
   * Sends the records of each topic the producer knows or whose lookup has succeeded, until all are sent or the
   * deadline passes; a topic in the negative cache, or whose lookup failed, gets that failure for all its messages. A
   * topic whose lookup found the queue full asks again while the deadline has not passed.
   */
  private void handOver(List<OutboxMessage> messages, Map<String, List<Integer>> byTopic, Map<String, Lookup> lookups,
      OpenProducer p, long deadline, DeliveryResult[] results, List<CompletableFuture<Void>> acks)
      throws InterruptedException {
    Map<String, List<Integer>> waiting = new LinkedHashMap<>(byTopic);
    while (!waiting.isEmpty()) {
      boolean progressed = false;
      boolean unqueued = false;
      List<CompletableFuture<Void>> pending = new ArrayList<>();
      for (Iterator<Map.Entry<String, List<Integer>>> it = waiting.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, List<Integer>> entry = it.next();
        String topic = entry.getKey();
        boolean ready = p.known.contains(topic);
        if (!ready) {
          Lookup lookup = lookups.get(topic);
          if (lookup == null || lookup.notRun()) {
            Unavailable cached = unavailable(topic);
            if (cached != null) {
              it.remove();
              progressed = true;
              DeliveryResult failed = DeliveryResult.retry(cached.error(), null);
              entry.getValue().forEach(i -> results[i] = failed);
              continue;
            }
            if (System.nanoTime() - deadline >= 0) {
              return;
            }
            lookup = lookup(p, topic, deadline);
            lookups.put(topic, lookup);
          }
          if (!lookup.done.isDone()) {
            pending.add(lookup.done);
            continue;
          }
          if (lookup.notRun()) {
            unqueued = true; // the queue was full: asked again on the next pass
            continue;
          }
          Throwable lookupError = errorOf(lookup.done);
          if (lookupError != null) {
            it.remove();
            progressed = true;
            DeliveryResult failed = lookupFailure(lookupError, p);
            entry.getValue().forEach(i -> results[i] = failed);
            continue;
          }
        }
        it.remove();
        progressed = true;
        List<Integer> indexes = entry.getValue();
        for (int k = 0; k < indexes.size(); k++) {
          if (System.nanoTime() - deadline >= 0) {
            return;
          }
          int i = indexes.get(k);
          CompletableFuture<Void> ack = send(p, topic, messages.get(i));
          acks.set(i, ack);
          if (ack.isCompletedExceptionally() && errorOf(ack) instanceof org.apache.kafka.common.errors.TimeoutException
              timedOut) {
            // the send blocked up to max.block.ms for metadata after all (the topic deleted, or its metadata expired):
            // the topic's other records would each block as long
            p.known.remove(topic);
            DeliveryResult failed = failure(timedOut, p);
            indexes.subList(k + 1, indexes.size()).forEach(j -> results[j] = failed);
            break;
          }
        }
      }
      if (!progressed) {
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
          return;
        }
        long wait = unqueued ? Math.min(remaining, TimeUnit.MILLISECONDS.toNanos(20)) : remaining;
        if (pending.isEmpty()) {
          TimeUnit.NANOSECONDS.sleep(wait);
        } else {
          try {
            CompletableFuture.anyOf(pending.toArray(CompletableFuture<?>[]::new)).get(wait, TimeUnit.NANOSECONDS);
          } catch (TimeoutException | ExecutionException e) {
            // a lookup has failed (seen on the next pass) or the wait has passed (seen below)
          }
        }
      }
    }
  }

  /** The result of a message that was not handed to the producer by the deadline. */
  private DeliveryResult notSent(String topic, Lookup lookup, OpenProducer p) {
    String passed = "not sent: the send timeout (" + sendTimeout + ") passed";
    String beforeLookup = passed + " before the metadata lookup of topic '" + topic + "' could ";
    String start = "start (at most " + LOOKUP_THREADS + " lookups run at a time)";
    if (lookup == null || lookup.done.isDone() && lookup.notRun()) {
      return DeliveryResult.retry(beforeLookup + (lookup != null && lookup.state() == Lookup.State.REJECTED
          ? "be queued (at most " + LOOKUP_THREADS + " lookups run at a time and " + LOOKUP_QUEUE + " wait)" : start),
          null);
    }
    if (!lookup.done.isDone()) {
      return DeliveryResult.retry(lookup.state() == Lookup.State.STARTED
          ? passed + " before Kafka had the metadata of topic '" + topic + "' (does it exist?)" : beforeLookup + start,
          null);
    }
    Throwable lookupError = errorOf(lookup.done);
    return lookupError != null ? lookupFailure(lookupError, p) : DeliveryResult.retry(passed, null);
  }

  /** The result of the messages of a topic whose lookup failed. */
  private DeliveryResult lookupFailure(Throwable error, OpenProducer p) {
    return error instanceof TopicUnavailable ? DeliveryResult.retry(error.getMessage(), null) : failure(error, p);
  }

  /**
   * The lookup of {@code topic} on {@code p}: the one under way, which now waits to start until {@code deadline} at
   * least, or a new one, queued for the lookup threads. A lookup the queue had no room for ends at once, {@link
   * Lookup#notRun()}.
   */
  private Lookup lookup(OpenProducer p, String topic, long deadline) {
    while (true) {
      Lookup existing = p.lookups.get(topic);
      if (existing != null) {
        if (existing.join(deadline)) {
          return existing;
        }
        p.lookups.remove(topic, existing); // skipped: every caller's deadline had passed before it could start
        continue;
      }
      Lookup created = new Lookup(deadline);
      if (p.lookups.putIfAbsent(topic, created) != null) {
        continue;
      }
      try {
        lookupPool.execute(() -> run(p, topic, created));
      } catch (RejectedExecutionException e) {
        boolean closing = lookupPool.isShutdown();
        if (!closing) {
          created.reject();
        }
        p.lookups.remove(topic, created);
        created.done.completeExceptionally(closing ? new IllegalStateException("the transport is closing", e)
            : NotRun.INSTANCE);
      }
      return created;
    }
  }

  /**
   * Looks {@code topic} up ({@code partitionsFor}, which blocks up to {@code max.block.ms}) unless every caller's
   * deadline has passed; records the outcome in the negative cache.
   */
  private void run(OpenProducer p, String topic, Lookup lookup) {
    if (!lookup.start()) {
      p.lookups.remove(topic, lookup);
      lookup.done.completeExceptionally(NotRun.INSTANCE);
      return;
    }
    try {
      p.producer.partitionsFor(topic);
      unavailable.remove(topic);
      p.known.add(topic);
      p.lookups.remove(topic, lookup);
      lookup.done.complete(null);
    } catch (RuntimeException | Error e) {
      Throwable outcome = e;
      if (e instanceof ApiException && !permanent(e) && !unusable(e)) {
        // a missing topic, a broker away, no authorization: fail fast for a while rather than block again
        Instant until = Instant.now().plus(sendTimeout).truncatedTo(ChronoUnit.MILLIS);
        outcome = new TopicUnavailable("metadata for topic '" + topic + "' unavailable: " + OutboxTransport.describe(e)
            + ", not retried before " + until, e);
        remember(topic, new Unavailable(outcome.getMessage(), System.nanoTime() + sendTimeout.toNanos()));
      }
      p.known.remove(topic);
      p.lookups.remove(topic, lookup);
      lookup.done.completeExceptionally(outcome);
      if (e instanceof Error error) {
        throw error;
      }
    }
  }

  /** The negative cache's entry for {@code topic}, {@code null} when none or expired (the entry is then dropped). */
  private Unavailable unavailable(String topic) {
    Unavailable u = unavailable.get(topic);
    if (u != null && System.nanoTime() - u.until() >= 0) {
      unavailable.remove(topic, u);
      return null;
    }
    return u;
  }

  private void remember(String topic, Unavailable u) {
    unavailable.put(topic, u);
    if (unavailable.size() > UNAVAILABLE_PURGE_SIZE) {
      long now = System.nanoTime();
      unavailable.values().removeIf(x -> now - x.until() >= 0);
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

  /**
   * The result of a failed send or lookup on {@code p}; sets {@code p} aside when the error leaves it unusable and it
   * is still the current producer.
   */
  DeliveryResult failure(Throwable error, OpenProducer p) {
    String text = OutboxTransport.describe(error);
    if (permanent(error)) {
      return DeliveryResult.permanent(text, null);
    }
    if (unusable(error)) {
      // the idempotent producer's state is lost (or it was closed): its later sends would fail the same way
      discard(p, error);
    }
    return DeliveryResult.retry(text, null);
  }

  /** An error of a record the broker will never take. */
  private static boolean permanent(Throwable error) {
    return error instanceof RecordTooLargeException || error instanceof RecordBatchTooLargeException
        || error instanceof InvalidTopicException;
  }

  /** An error that leaves a producer unusable: its later sends would fail the same way. */
  static boolean unusable(Throwable error) {
    return error instanceof ProducerFencedException || error instanceof OutOfOrderSequenceException
        || error instanceof UnknownProducerIdException || error instanceof AuthenticationException
        || error instanceof IllegalStateException || error.getClass() == KafkaException.class;
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

  /** The most metadata lookup threads that were ever alive at once. */
  int largestLookupPool() {
    return lookupPool.getLargestPoolSize();
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
   * Flushes what is in flight and closes the producer, then waits for the producers set aside to close and the lookup
   * threads to end: together at most about the send timeout. The transport's threads are daemon threads.
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
      closeQuietly(p.producer, sendTimeout); // also ends its lookups under way
    }
    lookupPool.shutdown();
    background.shutdown();
    try {
      for (ExecutorService pool : List.of(lookupPool, background)) {
        if (!pool.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
          pool.shutdownNow();
        }
      }
    } catch (InterruptedException e) {
      lookupPool.shutdownNow();
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

  /** One producer, the topics it has looked up and the lookups under way on it. */
  static final class OpenProducer {
    final Producer<String, byte[]> producer;
    /** Lookups under way, one per topic whoever asks. */
    private final Map<String, Lookup> lookups = new ConcurrentHashMap<>();
    /** Topics whose lookup succeeded: their records go to the producer with no lookup. */
    private final Set<String> known = ConcurrentHashMap.newKeySet();

    OpenProducer(Producer<String, byte[]> producer) {
      this.producer = producer;
    }
  }

  /**
   * One metadata lookup: queued, then started, or skipped when it could not start before the last deadline of the
   * calls waiting for it, or rejected when the queue was full. {@link #done} completes when it ends, with
   * {@link NotRun} when skipped or rejected.
   */
  static final class Lookup {
    enum State { QUEUED, STARTED, SKIPPED, REJECTED }

    final CompletableFuture<Void> done = new CompletableFuture<>();
    private long startBy;
    private State state = State.QUEUED;

    Lookup(long startBy) {
      this.startBy = startBy;
    }

    /** Lets a call with {@code deadline} share the lookup; false if it will not run (the call needs another). */
    synchronized boolean join(long deadline) {
      if (notRun()) {
        return false;
      }
      if (deadline - startBy > 0) {
        startBy = deadline;
      }
      return true;
    }

    /** On a lookup thread: whether to look up, false (skipped) when every waiting call's deadline has passed. */
    synchronized boolean start() {
      state = System.nanoTime() - startBy >= 0 ? State.SKIPPED : State.STARTED;
      return state == State.STARTED;
    }

    synchronized void reject() {
      state = State.REJECTED;
    }

    synchronized State state() {
      return state;
    }

    /** Skipped or rejected: it ended (or will end at once) without looking the topic up. */
    synchronized boolean notRun() {
      return state == State.SKIPPED || state == State.REJECTED;
    }
  }

  /** The outcome of a lookup that did not run. */
  private static final class NotRun extends RuntimeException {
    static final NotRun INSTANCE = new NotRun();

    private NotRun() {
      super("the metadata lookup did not run", null, false, false);
    }
  }

  /** A failed lookup, with the message that the negative cache repeats until it expires. */
  private static final class TopicUnavailable extends RuntimeException {
    TopicUnavailable(String message, Throwable cause) {
      super(message, cause, false, false);
    }
  }

  /** A negative cache entry: the error to report and when it expires ({@link System#nanoTime()}). */
  private record Unavailable(String error, long until) {}

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
    // one partition per aggregate is what keeps its events in order: a partitioner of one's own, or one told to
    // ignore keys, spreads an aggregate over partitions
    if (c.containsKey(ProducerConfig.PARTITIONER_CLASS_CONFIG)) {
      throw new IllegalArgumentException(ProducerConfig.PARTITIONER_CLASS_CONFIG + " is the transport's own: events"
          + " are keyed by aggregate id, and Kafka's default partitioner keeps an aggregate on one partition, in order"
          + " (transport " + name + ")");
    }
    Object ignoreKeys = c.get(ProducerConfig.PARTITIONER_IGNORE_KEYS_CONFIG);
    if (ignoreKeys != null && !"false".equalsIgnoreCase(ignoreKeys.toString().trim())) {
      throw new IllegalArgumentException(ProducerConfig.PARTITIONER_IGNORE_KEYS_CONFIG + " must be false: it would"
          + " spread an aggregate's events over partitions, out of order, got '" + ignoreKeys + "' (transport " + name
          + ")");
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
    long request = c.containsKey(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG)
        ? parsed.getInt(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG) : Math.max(1, Math.min(30_000, delivery - linger));
    c.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) request);
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

  /**
   * Creates a producer from {@code config} and closes it at once (which connects to nothing), so that what Kafka checks
   * only then is refused now rather than on every send. A bootstrap server name that does not resolve is no error (it
   * may resolve later): the rest is checked with a literal address in its place.
   */
  static void tryProducer(Map<String, Object> config, String name) {
    RuntimeException refused = create(config);
    if (refused != null && unresolved(refused)) {
      LOG.log(System.Logger.Level.WARNING, "transport " + name + ": no name in "
          + ProducerConfig.BOOTSTRAP_SERVERS_CONFIG + " resolves for now; the producer is created on the first send"
          + " that finds one");
      Map<String, Object> resolvable = new HashMap<>(config);
      resolvable.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9092");
      refused = create(resolvable);
    }
    if (refused != null) {
      throw new IllegalArgumentException("Kafka refuses the producer configuration of transport " + name + ": "
          + hideSecrets(causes(refused), config), refused);
    }
  }

  /** Creates a producer from {@code config} and closes it at once: {@code null} if that worked, else the error. */
  private static RuntimeException create(Map<String, Object> config) {
    try {
      new KafkaProducer<String, byte[]>(new HashMap<>(config)).close(Duration.ZERO);
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  /** Whether {@code e} is Kafka's refusal of bootstrap servers none of whose names resolve. */
  static boolean unresolved(Throwable e) {
    List<Throwable> chain = chain(e);
    Throwable root = chain.get(chain.size() - 1);
    return root instanceof ConfigException && root.getMessage() != null
        && root.getMessage().startsWith("No resolvable bootstrap urls");
  }

  /** {@code e} and its causes, outermost first, each once: the last is the root cause. */
  private static List<Throwable> chain(Throwable e) {
    List<Throwable> chain = new ArrayList<>();
    Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Throwable t = e; t != null && seen.add(t); t = t.getCause()) {
      chain.add(t);
    }
    return chain;
  }

  /**
   * {@code e} and its causes on one line, down to the root cause: the outermost and the root as class and message, the
   * others by their message; a message that the one before already contains is left out.
   */
  static String causes(Throwable e) {
    List<Throwable> chain = chain(e);
    StringBuilder text = new StringBuilder(OutboxTransport.describe(e));
    for (int k = 1; k < chain.size(); k++) {
      boolean isRoot = k == chain.size() - 1;
      String message = chain.get(k).getMessage();
      String part = isRoot ? OutboxTransport.describe(chain.get(k))
          : message == null ? null : message.replace('\n', ' ');
      if (part != null && !part.isBlank() && (message == null || isRoot
          || !String.valueOf(chain.get(k - 1).getMessage()).contains(message))) {
        text.append(": ").append(part);
      }
    }
    return text.toString();
  }

  /** {@code text} with the value of every secret of {@code config} replaced by {@value #HIDDEN}. */
  static String hideSecrets(String text, Map<String, Object> config) {
    String hidden = text;
    for (Map.Entry<String, Object> e : config.entrySet()) {
      if (secret(e.getKey())) {
        String value = e.getValue() instanceof Password password ? password.value() : String.valueOf(e.getValue());
        if (!value.isBlank()) {
          hidden = hidden.replace(value, HIDDEN);
        }
      }
    }
    return hidden;
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
    try {
      return value instanceof String s ? Long.parseLong(s.trim()) : null;
    } catch (NumberFormatException e) {
      return null;
    }
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
     * Builds the transport, after creating a producer from the final configuration and closing it at once (which
     * connects to nothing); the transport's own producer connects on the first send.
     *
     * @throws IllegalArgumentException when the configuration lacks {@code bootstrap.servers}, contradicts
     *     exactly-once delivery ({@code acks} other than all, idempotence off, {@code retries} 0, more than 5 requests
     *     in flight, its own serializers or a transactional id) or is one Kafka refuses when it creates a producer
     *     (see "Configuration" in the class comment)
     */
    public KafkaTransport build() {
      Map<String, Object> producerConfig = producerConfig(config, sendTimeout, name);
      tryProducer(producerConfig, name);
      return new KafkaTransport(this, producerConfig);
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
