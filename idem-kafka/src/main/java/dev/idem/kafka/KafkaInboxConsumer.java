package dev.idem.kafka;

import static dev.idem.outbox.consumer.ConsumerListener.safely;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.OutboxTransport;
import dev.idem.outbox.consumer.Action;
import dev.idem.outbox.consumer.ConsumerEngine;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.ConsumerOptions;
import dev.idem.outbox.consumer.DeadLetterHeaders;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.History;
import dev.idem.outbox.consumer.Reason;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.errors.RecordBatchTooLargeException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Consumes Kafka topics exactly once per event id: the records of each partition that one poll returns are processed
 * through the {@link Inbox} in one database transaction (the inbox rows of the batch written in one statement on
 * PostgreSQL and MariaDB, the handler's effects on the same connection), and the partition's offset is committed only
 * after that transaction has committed.
 *
 * <ul>
 *   <li>A crash or a rebalance between the database commit and the offset commit redelivers the batch to whichever
 *       consumer of the group owns the partition next; the inbox finds every event and skips it.</li>
 *   <li>A crash before the database commit rolls the effects back with the inbox rows: the batch runs again.</li>
 *   <li>Committing the offset before processing (the other classic mistake) would lose the batch on a crash; this
 *       consumer never does.</li>
 * </ul>
 *
 * <p>What to do with a record is {@link ConsumerEngine}'s decision (see its table), the same for every broker; this
 * class carries it out on Kafka and reports it to the {@link ConsumerListener}, with {@code <topic>-<partition>} as
 * the source. When a batch fails (the handler threw, a payload mismatch, a passing conflict) it is rolled back, and its
 * records are processed one at a time, each committed on its own, to find the failing one. Then:
 *
 * <ul>
 *   <li>{@code ACK} (processed with its batch, or a duplicate): the offset is committed past the batch.</li>
 *   <li>{@code RETRY} (the handler failed on this record, or its writes failed at the commit; or a passing conflict,
 *       not counted up to 20 times): the partition goes back to it and pauses, 1 s doubling to 30 s ({@link
 *       Builder#failurePause}), while the other partitions go on.</li>
 *   <li>{@code DEAD_LETTER} (the {@link Builder#maxAttempts}-th failure, default 5; a payload mismatch) and {@code
 *       REJECT} (no event id; an id the inbox cannot hold; a value larger than {@link Builder#maxPayloadBytes}): sent
 *       to the dead-letter topic, with the attempt history in headers, and the offset committed past it.</li>
 *   <li>{@code PAUSE} (the database is away: the inbox's own statements failed, it refuses everyone's work, or it does
 *       not answer a health check): every partition waits, and tries again without counting an attempt.</li>
 * </ul>
 *
 * <h2>Event ids</h2>
 * The event id is the {@value KafkaTransport#EVENT_ID_HEADER} header, which {@link KafkaTransport} sets to the outbox
 * event id, so a copy published twice by a relay (it crashed after sending, before marking the event delivered) is
 * recognised too. Records from other producers need a {@link Builder#eventId fallback}: {@link #OFFSET_ID} names a
 * record by its topic, partition and offset, which recognises redeliveries but not a producer's duplicates.
 *
 * <h2>Dead letters</h2>
 * A record is dead-lettered to {@code <topic>.dlt} by default ({@link Builder#deadLetterTopic}), with its key, value
 * and headers, plus {@code idem-dlt-reason}, {@code idem-dlt-consumer}, {@code idem-dlt-topic},
 * {@code idem-dlt-partition}, {@code idem-dlt-offset}, {@code idem-dlt-attempts} and one {@code idem-dlt-attempt-<n>}
 * header per failure ({@code <time> <error>}). It is not recorded in the inbox, so that an operator can publish it
 * again once the cause is fixed. The dead-letter topics must exist: {@link #start} checks. A crash between the
 * dead-letter send and the offset commit can dead-letter a record twice, with the same event id.
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder(JdbcInboxStore.builder(dataSource).build()).build();
 * try (KafkaInboxConsumer consumer = KafkaInboxConsumer.builder(
 *         Map.of("bootstrap.servers", "127.0.0.1:9092", "group.id", "billing"), inbox, List.of("payments"))
 *     .handler((tx, event) -> {
 *       ConsumerRecord<String, byte[]> record = KafkaInboxConsumer.record(event);
 *       applyPayment(tx.unwrap(Connection.class), record.key(), record.value());
 *       return null;
 *     })
 *     .build()
 *     .start()) {
 *   ...
 * }
 * }</pre>
 *
 * <p>Each consumer polls on one thread of its own, as Kafka's consumer requires; run several consumers with the same
 * group id (in one JVM or many) for more throughput, up to one per partition. Failure counts are kept in memory (at
 * most 10,000 records, keyed by offset, kept across rebalances) and start again in another consumer or after a
 * restart. Thread-safe: {@link #start} and {@link #close} may be called from any thread.
 */
public final class KafkaInboxConsumer implements AutoCloseable {
  /** The event id of a record from its position: {@code <topic>-<partition>@<offset>}. */
  public static final Function<ConsumerRecord<String, byte[]>, String> OFFSET_ID =
      r -> r.topic() + '-' + r.partition() + '@' + r.offset();

  private static final System.Logger LOG = System.getLogger(KafkaInboxConsumer.class.getName());
  private static final int MAX_TRACKED_FAILURES = 10_000;
  /** Numbers the client ids of the consumers of one JVM, so that their JMX names differ. */
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  private static final Duration MAX_PAUSE = Duration.ofSeconds(30);
  /** How many deadlocks or lock timeouts of one record are retried before they count as its failures. */
  private static final int MAX_UNCOUNTED_CONTENTION = 20;

  private final String name;
  private final Inbox inbox;
  private final List<String> topics;
  private final InboxHandler handler;
  private final Map<String, Object> consumerConfig;
  private final Map<String, Object> producerConfig;
  private final Function<String, String> deadLetterTopic;
  private final Function<ConsumerRecord<String, byte[]>, String> eventIdFallback;
  private final int maxPayloadBytes;
  private final Duration pollTimeout;
  private final Duration sendTimeout;
  private final Duration closeTimeout;
  private final ConsumerListener listener;
  private final ConsumerEngine engine;
  private final Clock clock;
  /** Monotonic nanoseconds for pauses and their deadlines, which a step of the wall clock must not move. */
  private final LongSupplier ticker;
  private final boolean firstDeliveryOrder;

  private final Object lifecycle = new Object();
  private final Map<String, Failures> failures = new LinkedHashMap<>(64, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Failures> eldest) {
      return size() > MAX_TRACKED_FAILURES;
    }
  };
  /** Paused partitions, each with when it resumes ({@link #ticker} nanoseconds). */
  private final Map<TopicPartition, Long> pausedUntil = new HashMap<>();
  /** Offsets whose commit failed while the partition stayed assigned: committed again after the next poll. */
  private final Map<TopicPartition, Long> pendingCommits = new HashMap<>();
  /**
   * The partitions whose last poll this consumer committed cleanly (no failure, no duplicate) since they were assigned
   * to it, each with the offset its next records start at: records from there are first deliveries.
   */
  private final Map<TopicPartition, Long> delivering = new HashMap<>();
  /** Whether the batch being processed is a first delivery ({@link Builder#firstDeliveryOrder}). */
  private boolean firstDelivery;
  /** Whether a batch of the partition being processed held a duplicate. */
  private boolean sawDuplicate;
  private Consumer<String, byte[]> consumer;
  private Producer<String, byte[]> deadLetters;
  private Thread thread;
  private boolean started;
  private volatile boolean closed;
  private volatile boolean running;
  /** Set when Kafka refused an offset commit because this consumer left the group: the rest of the poll is dropped. */
  private boolean leftGroup;
  private int storeFailures;
  /** Whether every partition waits because the database failed, until {@link #databaseDownUntil}. */
  private boolean databaseDown;
  /** Until when every partition waits because the database failed ({@link #ticker} nanoseconds). */
  private long databaseDownUntil;
  private int pollFailures;

  private KafkaInboxConsumer(Builder b, Map<String, Object> consumerConfig, Map<String, Object> producerConfig) {
    this.inbox = b.inbox;
    this.topics = List.copyOf(b.topics);
    this.handler = b.handler;
    this.consumerConfig = consumerConfig;
    this.name = b.name != null ? b.name : consumerConfig.get(ConsumerConfig.GROUP_ID_CONFIG).toString();
    this.producerConfig = producerConfig;
    this.deadLetterTopic = b.deadLetterTopic;
    this.eventIdFallback = b.eventIdFallback;
    this.maxPayloadBytes = b.maxPayloadBytes;
    this.pollTimeout = b.pollTimeout;
    this.sendTimeout = b.sendTimeout;
    this.closeTimeout = b.closeTimeout;
    this.listener = b.listener;
    this.clock = b.clock;
    this.ticker = b.ticker;
    this.firstDeliveryOrder = b.firstDeliveryOrder;
    this.engine = ConsumerEngine.builder().maxAttempts(b.maxAttempts).backoff(b.failurePause, MAX_PAUSE)
        .maxUncountedContention(MAX_UNCOUNTED_CONTENTION).build();
  }

  /**
   * A consumer of {@code topics}.
   *
   * @param config the Kafka consumer configuration: at least {@code bootstrap.servers} and {@code group.id}; the
   *     group id is also the inbox's consumer name unless {@link Builder#name} sets another
   * @param inbox the inbox; its data source runs the transactions
   */
  public static Builder builder(Map<String, ?> config, Inbox inbox, Collection<String> topics) {
    return new Builder(config, inbox, topics);
  }

  /**
   * The record an event of this consumer's handler came in: {@code event.message(ConsumerRecord.class)}, typed.
   *
   * @throws IllegalStateException when the event came in no Kafka record
   */
  @SuppressWarnings("unchecked")
  public static ConsumerRecord<String, byte[]> record(InboxEvent event) {
    return event.message(ConsumerRecord.class);
  }

  /** The inbox's consumer name: deduplication is per name and event id. */
  public String name() {
    return name;
  }

  public List<String> topics() {
    return topics;
  }

  /**
   * Checks that the topics and their dead-letter topics exist, subscribes, and starts polling on a thread of its own.
   * Starts once.
   *
   * @return this consumer
   * @throws IllegalStateException when Kafka is unreachable or a topic is missing
   */
  public KafkaInboxConsumer start() {
    synchronized (lifecycle) {
      if (started || closed) {
        throw new IllegalStateException("consumer '" + name + "' was started or closed already; build a new one");
      }
      started = true;
      Consumer<String, byte[]> c = null;
      Producer<String, byte[]> p = null;
      try {
        c = new KafkaConsumer<>(new HashMap<>(consumerConfig));
        for (String topic : topics) {
          requireTopic(c, topic, "topic");
          requireTopic(c, deadLetterTopic.apply(topic), "dead-letter topic");
        }
        p = new KafkaProducer<>(new HashMap<>(producerConfig));
        c.subscribe(topics, new Rebalance());
      } catch (RuntimeException e) {
        if (c != null) {
          c.close(Duration.ZERO);
        }
        if (p != null) {
          p.close(Duration.ZERO);
        }
        throw e;
      }
      consumer = c;
      deadLetters = p;
      running = true;
      thread = new Thread(this::run, "idem-kafka-consumer-" + name);
      thread.setDaemon(true);
      thread.start();
      return this;
    }
  }

  private void requireTopic(Consumer<String, byte[]> c, String topic, String what) {
    List<PartitionInfo> partitions;
    try {
      partitions = c.partitionsFor(topic, sendTimeout);
    } catch (KafkaException e) {
      throw new IllegalStateException("consumer '" + name + "' cannot read the metadata of " + what + " '" + topic
          + "': " + OutboxTransport.describe(e) + ". Check that Kafka is reachable.", e);
    }
    if (partitions == null || partitions.isEmpty()) {
      throw new IllegalStateException("consumer '" + name + "': " + what + " '" + topic + "' does not exist; create it"
          + " before starting the consumer");
    }
  }

  /** Whether the polling thread is alive: false before {@link #start}, after {@link #close} or a fatal error. */
  public boolean isRunning() {
    return running;
  }

  private void run() {
    Throwable fatal = null;
    try {
      while (!closed) {
        // only close() stops this thread: an interrupt left by a handler would make every blocking call fail at once
        Thread.interrupted();
        resumeDue();
        retryPendingCommits();
        ConsumerRecords<String, byte[]> records;
        try {
          records = consumer.poll(pollTimeout);
          pollFailures = 0;
        } catch (WakeupException | InterruptException e) {
          continue; // close() woke the poll up, or a stray interrupt: the loop condition decides
        } catch (KafkaException | IllegalStateException e) {
          safely(() -> listener.receiveFailed(name, String.join(",", topics), e));
          LOG.log(System.Logger.Level.WARNING, "consumer '" + name + "': polling failed ("
              + OutboxTransport.describe(e) + "); polling again after a pause");
          pause(engine.backoff(++pollFailures));
          continue;
        }
        leftGroup = false;
        for (TopicPartition partition : records.partitions()) {
          if (closed || leftGroup) {
            break; // the rest is redelivered to the partitions' next owner
          }
          List<ConsumerRecord<String, byte[]>> batch = records.records(partition);
          long waitNanos = databaseDown ? databaseDownUntil - ticker.getAsLong() : 0L;
          if (waitNanos > 0) {
            // the database failed on another partition of this poll: every partition waits
            seekAndPause(partition, batch.get(0).offset(), Duration.ofNanos(waitNanos));
            continue;
          }
          databaseDown = false;
          try {
            processPartition(partition, batch);
            // a handler may leave the interrupt flag set; only close() stops this thread
            Thread.interrupted();
          } catch (RuntimeException | LinkageError | AssertionError | StackOverflowError e) {
            // never end the loop: go back to the batch and try again later
            LOG.log(System.Logger.Level.ERROR, "consumer '" + name + "': unexpected failure on " + partition, e);
            seekAndPause(partition, batch.get(0).offset(), engine.backoff(1));
          }
        }
      }
    } catch (Throwable e) {
      // OutOfMemoryError and the like: nothing here can be trusted to go on
      fatal = e;
      LOG.log(System.Logger.Level.ERROR, "consumer '" + name + "' stopped: " + OutboxTransport.describe(e)
          + "; its partitions go to the group's other members", e);
      throw e;
    } finally {
      running = false;
      closeClients();
      Throwable cause = fatal;
      if (cause != null) {
        safely(() -> listener.stopped(name, cause));
      }
    }
  }

  /** Processes the records one poll returned for one partition, in offset order. */
  private void processPartition(TopicPartition partition, List<ConsumerRecord<String, byte[]>> records) {
    // records first unless the partition's last poll committed cleanly and these records come after it (offsets skip
    // transaction markers and compacted records): after an assignment, a failure, a duplicate or a seek back, they may
    // have been delivered before
    Long next = delivering.remove(partition);
    firstDelivery = firstDeliveryOrder && next != null && records.get(0).offset() >= next;
    sawDuplicate = false;
    if (processRecords(partition, records) && !sawDuplicate) {
      delivering.put(partition, records.get(records.size() - 1).offset() + 1);
    }
  }

  /** Processes the poll's records of one partition; returns whether all of them were committed, none sent back. */
  private boolean processRecords(TopicPartition partition, List<ConsumerRecord<String, byte[]>> records) {
    List<Prepared> segment = new ArrayList<>(records.size());
    for (ConsumerRecord<String, byte[]> record : records) {
      Reason refusal = refusal(record);
      Prepared prepared = refusal == null ? prepare(record) : null;
      if (prepared == null && refusal == null) {
        refusal = Reason.INVALID_ID;
      }
      Failures known = refusal == null && !failures.isEmpty() ? failures.get(key(record)) : null;
      if (refusal == null && known == null) {
        segment.add(prepared);
        continue;
      }
      // refused, or it failed before: alone, so that its retries do not roll back the records after it
      if (!segment.isEmpty() && !process(partition, segment) || leftGroup) {
        return false; // after leaving the group, the rest goes to the partition's next owner
      }
      segment = new ArrayList<>();
      boolean done;
      if (refusal != null) {
        done = deadLetter(partition, record, headerId(record), engine.refused(refusal), null, List.of());
      } else if (known.deadLetter != null) {
        // its dead-letter send failed: send it again, without running the handler again
        done = deadLetter(partition, record, prepared.event.eventId(), known.deadLetter, known.error, known.history);
      } else {
        done = process(partition, List.of(prepared));
      }
      if (!done || leftGroup) {
        return false;
      }
    }
    return (segment.isEmpty() || process(partition, segment)) && !leftGroup;
  }

  private Reason refusal(ConsumerRecord<String, byte[]> record) {
    if (record.value() != null && record.value().length > maxPayloadBytes) {
      return Reason.TOO_LARGE;
    }
    Header header = record.headers().lastHeader(KafkaTransport.EVENT_ID_HEADER);
    if (header == null && eventIdFallback == null) {
      return Reason.MISSING_ID;
    }
    return null;
  }

  /** The record's event id header, or null when it has none or it is not UTF-8: for the listener only. */
  private static String headerId(ConsumerRecord<String, byte[]> record) {
    Header header = record.headers().lastHeader(KafkaTransport.EVENT_ID_HEADER);
    try {
      return header == null ? null : decode(header.value());
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  /** The record with its event id, or null when the id is not one the inbox can hold. */
  private Prepared prepare(ConsumerRecord<String, byte[]> record) {
    Header header = record.headers().lastHeader(KafkaTransport.EVENT_ID_HEADER);
    String id;
    try {
      id = header != null ? decode(header.value()) : eventIdFallback.apply(record);
    } catch (RuntimeException | CharacterCodingException e) {
      return null;
    }
    if (id == null || id.isEmpty() || id.length() > 255 || id.chars().anyMatch(Character::isISOControl)) {
      return null;
    }
    byte[] payload = record.value() == null ? new byte[0] : record.value();
    String source = "kafka:" + record.topic();
    return new Prepared(record, new InboxEvent(id, source.length() > 255 ? source.substring(0, 255) : source,
        payload, record));
  }

  private static String decode(byte[] bytes) throws CharacterCodingException {
    if (bytes == null) {
      return null;
    }
    return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
  }

  /**
   * Processes {@code records} (consecutive offsets of one partition) in one transaction and commits the offset past
   * them; on a failure, falls back to one record at a time.
   *
   * @return true when the partition may go on past these records, false when it was sent back and paused
   */
  private boolean process(TopicPartition partition, List<Prepared> records) {
    try {
      commitBatch(partition, records);
      storeFailures = 0;
      return true;
    } catch (OutOfMemoryError | InternalError | UnknownError e) {
      seekAndPause(partition, records.get(0).record.offset(), engine.backoff(1));
      throw e;
    } catch (RuntimeException | Error e) {
      firstDelivery = false; // what comes next is tried again: records first
      Reason fault = ConsumerEngine.classify(e, inbox.store());
      ConsumerRecord<String, byte[]> first = records.get(0).record;
      if (fault == Reason.DATABASE_DOWN) {
        Decision d = engine.decide(fault, new History(0, 0, storeFailures++));
        safely(() -> listener.paused(name, partition.toString(), records.get(0).event.eventId(), d, e));
        LOG.log(System.Logger.Level.WARNING, "consumer '" + name + "': the database failed on " + partition + " ("
            + OutboxTransport.describe(e) + "); every partition waits " + d.after().toMillis() + " ms");
        databaseDown = true;
        databaseDownUntil = ticker.getAsLong() + d.after().toNanos();
        seekAndPause(partition, first.offset(), d.after());
        for (TopicPartition tp : consumer.assignment()) {
          if (!pausedUntil.containsKey(tp)) {
            consumer.pause(Set.of(tp));
            pausedUntil.put(tp, databaseDownUntil);
          }
        }
        return false;
      }
      if (records.size() > 1) {
        for (Prepared p : records) {
          if (!process(partition, List.of(p)) || leftGroup) {
            return false;
          }
        }
        return true;
      }
      return failed(partition, records.get(0), fault, e);
    }
  }

  /** One record failed on its own: count it, then pause or dead-letter it, as the engine decides. */
  private boolean failed(TopicPartition partition, Prepared p, Reason fault, Throwable e) {
    ConsumerRecord<String, byte[]> record = p.record;
    Throwable cause = e instanceof InboxHandlerException && e.getCause() != null ? e.getCause() : e;
    String key = key(record);
    Failures f = failures.computeIfAbsent(key, k -> new Failures());
    Decision d = engine.decide(fault, new History(f.count, f.uncounted, 0));
    String source = partition.toString();
    String id = p.event.eventId();
    if (d.counted()) {
      f.add(clock.instant(), cause);
    } else if (d.action() == Action.RETRY) {
      f.uncounted++; // a passing conflict: the record goes back without counting
    }
    if (d.action() == Action.RETRY) {
      if (d.counted()) {
        LOG.log(System.Logger.Level.INFO, "consumer '" + name + "': event " + id + " at " + key + " failed (attempt "
            + d.attempts() + " of " + engine.maxAttempts() + "): " + OutboxTransport.describe(cause));
      }
      safely(() -> listener.retried(name, source, id, d, cause));
      seekAndPause(partition, record.offset(), d.after());
      return false;
    }
    if (d.reason() == Reason.HANDLER_FAILED) {
      LOG.log(System.Logger.Level.WARNING, "consumer '" + name + "': event " + id + " at " + key + " failed "
          + d.attempts() + " times (" + OutboxTransport.describe(cause) + "); dead-lettering it");
    }
    f.deadLetter = d;
    f.error = cause;
    boolean sent = deadLetter(partition, record, id, d, cause, f.history);
    if (sent) {
      failures.remove(key);
    }
    return sent;
  }

  private void commitBatch(TopicPartition partition, List<Prepared> records) {
    List<InboxEvent> events = records.stream().map(Prepared::event).toList();
    // the inbox runs the handler for the batch's new events only, the first of each event id, which carries its record
    List<InboxResult> results = inbox.processBatchAndCommit(name, events, handler, firstDelivery);
    long next = records.get(records.size() - 1).record.offset() + 1;
    int count = records.size();
    int dups = (int) results.stream().filter(InboxResult::duplicate).count();
    sawDuplicate |= dups > 0;
    String source = partition.toString();
    safely(() -> listener.committed(name, source, next, count, dups));
    if (!failures.isEmpty()) {
      for (Prepared p : records) {
        failures.remove(key(p.record));
      }
    }
    commitOffset(partition, next);
    for (int i = 0; i < records.size(); i++) {
      String id = records.get(i).event.eventId();
      if (results.get(i).duplicate()) {
        safely(() -> listener.duplicate(name, source, id));
      } else {
        safely(() -> listener.processed(name, source, id));
      }
    }
  }

  private void commitOffset(TopicPartition partition, long next) {
    pendingCommits.remove(partition);
    RuntimeException error = commit(Map.of(partition, new OffsetAndMetadata(next)));
    if (error != null) {
      failedCommit(partition, next, error);
    }
  }

  /** Commits {@code offsets}; returns what went wrong, or null. */
  private RuntimeException commit(Map<TopicPartition, OffsetAndMetadata> offsets) {
    for (int attempt = 1; ; attempt++) {
      try {
        consumer.commitSync(offsets, sendTimeout);
        return null;
      } catch (WakeupException | InterruptException e) {
        if (attempt == 2) {
          return e;
        }
        // close() woke the consumer up while committing (a wake-up is one-shot), or a stray interrupt: try again
        Thread.interrupted();
      } catch (KafkaException e) { // CommitFailedException (the partition moved), a timeout, ...
        return e;
      }
    }
  }

  private void failedCommit(TopicPartition partition, long next, RuntimeException e) {
    // the effects are committed; whoever reads these records again finds them in the inbox
    safely(() -> listener.answerFailed(name, partition.toString(), null, e));
    if (e instanceof CommitFailedException) {
      // this consumer is no longer in the group: its partitions have other owners now
      leftGroup = true;
      pendingCommits.clear();
    } else {
      pendingCommits.merge(partition, next, Math::max);
    }
    LOG.log(System.Logger.Level.WARNING, "consumer '" + name + "': committing offset " + next + " of " + partition
        + " failed (" + OutboxTransport.describe(e) + "); its records are in the inbox and will be skipped when read"
        + " again" + (e instanceof CommitFailedException ? "" : "; committing it again after the next poll"));
  }

  /** Commits the offsets whose commit failed earlier, for partitions still assigned. */
  private void retryPendingCommits() {
    if (pendingCommits.isEmpty()) {
      return;
    }
    pendingCommits.keySet().retainAll(consumer.assignment());
    if (pendingCommits.isEmpty()) {
      return;
    }
    Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
    pendingCommits.forEach((tp, next) -> offsets.put(tp, new OffsetAndMetadata(next)));
    RuntimeException error = commit(offsets);
    if (error == null || error instanceof CommitFailedException) {
      pendingCommits.clear();
    }
  }

  private boolean deadLetter(TopicPartition partition, ConsumerRecord<String, byte[]> record, String id, Decision d,
      Throwable cause, List<String> history) {
    String topic = deadLetterTopic.apply(record.topic());
    int attempts = d.attempts();
    RecordHeaders headers = new RecordHeaders();
    for (Header h : record.headers()) {
      if (!DeadLetterHeaders.isOwn(h.key())) {
        headers.add(h);
      }
    }
    deadLetterHeaders(d, name, record, history).forEach(headers::add);
    byte[] value = record.value();
    if (value == null) {
      // an empty value, not null: on a compacted dead-letter topic null would be a tombstone, deleting earlier dead
      // letters of its key and then itself
      headers.add("idem-dlt-value-null", utf8("true"));
      value = new byte[0];
    }
    Throwable error = send(new ProducerRecord<>(topic, null, record.key(), value, headers));
    if (error instanceof RecordTooLargeException || error instanceof RecordBatchTooLargeException) {
      // the dead-letter topic will never take it whole: keep the key, our headers and the event id, drop the value
      RecordHeaders stripped = new RecordHeaders();
      Header idHeader = record.headers().lastHeader(KafkaTransport.EVENT_ID_HEADER);
      if (idHeader != null) {
        stripped.add(idHeader);
      }
      for (Header h : headers) {
        if (DeadLetterHeaders.isOwn(h.key())) {
          stripped.add(h);
        }
      }
      stripped.add("idem-dlt-value-dropped", utf8((record.value() == null ? 0 : record.value().length)
          + " bytes, too large for the dead-letter topic: " + OutboxTransport.describe(error)));
      // an empty value, not null: on a compacted dead-letter topic null would be a tombstone
      error = send(new ProducerRecord<>(topic, null, record.key(), new byte[0], stripped));
    }
    if (error != null) {
      Throwable failure = error;
      safely(() -> listener.deadLetterFailed(name, partition.toString(), id, failure));
      LOG.log(System.Logger.Level.WARNING, "consumer '" + name + "': could not dead-letter " + partition + "@"
          + record.offset() + " to '" + topic + "' (" + OutboxTransport.describe(error) + "); trying again after a"
          + " pause");
      seekAndPause(partition, record.offset(), engine.backoff(Math.max(1, attempts)));
      return false;
    }
    failures.remove(key(record));
    if (d.action() == Action.REJECT) {
      String detail = d.reason().code() + " at " + key(record) + ", sent to '" + topic + "'";
      safely(() -> listener.rejected(name, partition.toString(), id, d.reason(), detail));
    } else {
      safely(() -> listener.deadLettered(name, partition.toString(), id, d, cause));
    }
    commitOffset(partition, record.offset() + 1);
    return true;
  }

  /** Sends to the dead-letter topic and waits for the acknowledgement; returns the error, or null. */
  private Throwable send(ProducerRecord<String, byte[]> record) {
    Throwable error;
    try {
      deadLetters.send(record).get(sendTimeout.toMillis(), TimeUnit.MILLISECONDS);
      return null;
    } catch (ExecutionException e) {
      error = e.getCause() == null ? e : e.getCause();
    } catch (InterruptedException e) {
      return e; // a stray interrupt: only close() stops this thread, and the loop clears the flag
    } catch (TimeoutException | RuntimeException e) {
      error = e;
    }
    if (KafkaTransport.unusable(error)) {
      // the producer's state is lost: every later send would fail the same way, so the next one gets a new producer
      LOG.log(System.Logger.Level.WARNING, "consumer '" + name + "': the dead-letter producer is unusable ("
          + OutboxTransport.describe(error) + "); opening a new one");
      Producer<String, byte[]> old = deadLetters;
      try {
        deadLetters = new KafkaProducer<>(new HashMap<>(producerConfig));
      } catch (RuntimeException e) {
        return e; // kept the old one; the next failure tries again
      }
      try {
        old.close(Duration.ofSeconds(1));
      } catch (RuntimeException ignored) {
        // it was broken already
      }
    }
    return error;
  }

  /** Idem's dead-letter headers of {@code record}: {@link DeadLetterHeaders}, with its topic, partition and offset. */
  private static RecordHeaders deadLetterHeaders(Decision decision, String consumer, ConsumerRecord<?, ?> record,
      List<String> history) {
    Map<String, String> origin = new LinkedHashMap<>();
    origin.put("topic", record.topic());
    origin.put("partition", Integer.toString(record.partition()));
    origin.put("offset", Long.toString(record.offset()));
    RecordHeaders headers = new RecordHeaders();
    DeadLetterHeaders.of(decision, consumer, origin, history).forEach((k, v) -> headers.add(k, utf8(v)));
    return headers;
  }

  private static String key(ConsumerRecord<String, byte[]> record) {
    return record.topic() + '-' + record.partition() + '@' + record.offset();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private void seekAndPause(TopicPartition partition, long offset, Duration pause) {
    try {
      consumer.seek(partition, offset);
      consumer.pause(Set.of(partition));
      pausedUntil.put(partition, ticker.getAsLong() + pause.toNanos());
    } catch (IllegalStateException e) {
      // the partition is no longer assigned: its next owner reads from the committed offset
    }
  }

  private void resumeDue() {
    if (pausedUntil.isEmpty()) {
      return;
    }
    long now = ticker.getAsLong();
    for (Iterator<Map.Entry<TopicPartition, Long>> it = pausedUntil.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<TopicPartition, Long> e = it.next();
      if (e.getValue() - now <= 0) { // nanoTime values compare by their difference only
        it.remove();
        if (consumer.assignment().contains(e.getKey())) {
          consumer.resume(Set.of(e.getKey()));
        }
      }
    }
  }

  /** Waits {@code pause} or until {@link #close}. */
  private void pause(Duration pause) {
    synchronized (lifecycle) {
      if (!closed) {
        try {
          lifecycle.wait(Math.max(1, pause.toMillis()));
        } catch (InterruptedException e) {
          // only close() stops this thread; it sets closed first
        }
      }
    }
  }

  private void closeClients() {
    try {
      consumer.close(closeTimeout);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "consumer '" + name + "': closing the Kafka consumer failed", e);
    }
    try {
      deadLetters.close(closeTimeout);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "consumer '" + name + "': closing the dead-letter producer failed", e);
    }
  }

  /**
   * Stops polling: the batch in progress finishes (its transaction and its offset commit), the consumer leaves its
   * group so that its partitions move at once, and the clients are closed. Waits at most the close timeout plus the
   * send timeout (a dead-letter send in progress); a handler still running after that finishes on its own.
   */
  @Override
  public void close() {
    Thread t;
    synchronized (lifecycle) {
      if (closed) {
        return;
      }
      closed = true;
      lifecycle.notifyAll();
      t = thread;
      if (consumer != null) {
        consumer.wakeup();
      }
    }
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(closeTimeout.toMillis() + sendTimeout.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return "KafkaInboxConsumer{" + name + ' ' + topics + '}';
  }

  private final class Rebalance implements ConsumerRebalanceListener {
    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
      // nothing is in flight here: batches are processed and committed between polls; offsets whose commit failed
      // get one more try while the partitions are still ours
      Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
      for (TopicPartition tp : partitions) {
        Long next = pendingCommits.remove(tp);
        if (next != null) {
          offsets.put(tp, new OffsetAndMetadata(next));
        }
      }
      if (!offsets.isEmpty()) {
        commit(offsets);
      }
      forget(partitions);
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
      // reading starts from the committed offsets
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
      partitions.forEach(pendingCommits::remove);
      forget(partitions);
    }

    private void forget(Collection<TopicPartition> partitions) {
      // failure counts stay: they are keyed by offset, and an eager rebalance often hands the partition straight back
      partitions.forEach(pausedUntil::remove);
      partitions.forEach(delivering::remove);
    }
  }

  private record Prepared(ConsumerRecord<String, byte[]> record, InboxEvent event) {}

  /** The failures of one record: how many, and the last ones with their times ({@link DeadLetterHeaders}). */
  private static final class Failures {
    int count;
    /** Set once the record is to be dead-lettered: a failed send is retried without running the handler again. */
    Decision deadLetter;
    /** What the last counted failure threw. */
    Throwable error;
    /** Passing conflicts (deadlocks, lock timeouts) of this record, not counted in {@link #count}. */
    int uncounted;
    List<String> history = List.of();

    void add(Instant at, Throwable error) {
      count++;
      history = DeadLetterHeaders.append(history, DeadLetterHeaders.attempt(at, error));
    }
  }

  /** Builds a {@link KafkaInboxConsumer}. Not thread-safe. */
  public static final class Builder {
    private final Map<String, Object> config = new LinkedHashMap<>();
    private final Inbox inbox;
    private final List<String> topics;
    private String name;
    private InboxHandler handler;
    private Map<String, Object> producerOverrides = Map.of();
    private Function<String, String> deadLetterTopic = topic -> topic + ".dlt";
    private Function<ConsumerRecord<String, byte[]>, String> eventIdFallback;
    private int batchSize = 100;
    private int maxAttempts = 5;
    private int maxPayloadBytes = 1 << 20;
    private Duration failurePause = Duration.ofSeconds(1);
    private Duration pollTimeout = Duration.ofMillis(500);
    private Duration sendTimeout = Duration.ofSeconds(15);
    private Duration closeTimeout = Duration.ofSeconds(30);
    private ConsumerListener listener = new ConsumerListener() {};
    private Clock clock = Clock.systemUTC();
    private LongSupplier ticker = System::nanoTime;
    private boolean firstDeliveryOrder;

    private Builder(Map<String, ?> config, Inbox inbox, Collection<String> topics) {
      Objects.requireNonNull(config, "config").forEach((k, v) -> this.config.put(
          Objects.requireNonNull(k, "configuration key"), Objects.requireNonNull(v, () -> "value of " + k)));
      this.inbox = Objects.requireNonNull(inbox, "inbox");
      Objects.requireNonNull(topics, "topics");
      if (topics.isEmpty()) {
        throw new IllegalArgumentException("topics must name at least one topic");
      }
      for (String topic : topics) {
        KafkaTransport.Builder.checkTopic(topic);
      }
      this.topics = List.copyOf(new LinkedHashSet<>(topics));
    }

    /** The inbox's consumer name (default: the group id). 1 to 255 characters. */
    public Builder name(String name) {
      this.name = ConsumerOptions.name("name", Objects.requireNonNull(name, "name"), 255);
      return this;
    }

    /**
     * The consumer's effect, run in the inbox's transaction once per event id. Required. Each event's id is the
     * record's {@value KafkaTransport#EVENT_ID_HEADER} header (or the {@link #eventId fallback}'s), its source
     * {@code kafka:<topic>}, its payload the value (empty for null); {@link KafkaInboxConsumer#record(InboxEvent)} is
     * the record itself (key decoded as UTF-8, headers, offset). For a JDBC inbox, {@code tx.unwrap(Connection.class)}
     * is the transaction's connection: write the effect on it, never commit it.
     *
     * <p>The inbox calls {@link InboxHandler#handle} for each new record of a partition's batch, in offset order;
     * override {@link InboxHandler#handleAll} to take the batch's new records at once (one JDBC batch for all of them,
     * say; records already processed are not passed in). What the handler throws rolls the batch back; the consumer
     * then tries its records one at a time, so that only a record that fails on its own is retried and, after
     * {@link #maxAttempts} failures, dead-lettered.
     */
    public Builder handler(InboxHandler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /** At most how many records one poll returns (Kafka's {@code max.poll.records}; default 100, 1 to 1000). */
    public Builder batchSize(int size) {
      this.batchSize = ConsumerOptions.between("batchSize", size, 1, 1000);
      return this;
    }

    /** After how many failures of the handler a record is dead-lettered (default 5, 1 to 100). */
    public Builder maxAttempts(int attempts) {
      this.maxAttempts = ConsumerOptions.between("maxAttempts", attempts, 1, 100);
      return this;
    }

    /** The largest record value processed; larger ones are dead-lettered (default 1 MiB, at most 64 MiB). */
    public Builder maxPayloadBytes(int bytes) {
      this.maxPayloadBytes = ConsumerOptions.between("maxPayloadBytes", bytes, 1, 64 << 20);
      return this;
    }

    /** The pause after a first failure, doubled after each next one up to 30 s (default 1 s, 1 ms to 30 s). */
    public Builder failurePause(Duration pause) {
      Objects.requireNonNull(pause, "failurePause");
      this.failurePause = ConsumerOptions.between("failurePause", pause, Duration.ofMillis(1), MAX_PAUSE);
      return this;
    }

    /** How long one poll waits for records (default 500 ms, 1 ms to 10 s); also bounds how long close waits. */
    public Builder pollTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "pollTimeout");
      this.pollTimeout = ConsumerOptions.between("pollTimeout", timeout, Duration.ofMillis(1), Duration.ofSeconds(10));
      return this;
    }

    /** How long an offset commit, a dead-letter send or the topic check may take (default 15 s, 1 s to 5 min). */
    public Builder sendTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "sendTimeout");
      this.sendTimeout = ConsumerOptions.between("sendTimeout", timeout, Duration.ofSeconds(1), Duration.ofMinutes(5));
      return this;
    }

    /** How long {@link #close} waits for the clients to close (default 30 s, 0 to 5 min). */
    public Builder closeTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "closeTimeout");
      this.closeTimeout = ConsumerOptions.between("closeTimeout", timeout, Duration.ZERO, Duration.ofMinutes(5));
      return this;
    }

    /** The dead-letter topic of each consumed topic (default {@code <topic>.dlt}). */
    public Builder deadLetterTopic(Function<String, String> topicOf) {
      this.deadLetterTopic = Objects.requireNonNull(topicOf, "deadLetterTopic");
      return this;
    }

    /**
     * The event id of a record without the {@value KafkaTransport#EVENT_ID_HEADER} header, e.g. {@link #OFFSET_ID}
     * (default: none, such records are dead-lettered).
     */
    public Builder eventId(Function<ConsumerRecord<String, byte[]>, String> fallback) {
      this.eventIdFallback = Objects.requireNonNull(fallback, "eventId");
      return this;
    }

    /**
     * Settings for the dead-letter producer on top of the consumer's connection settings (bootstrap servers and
     * security are copied from the consumer configuration).
     */
    public Builder deadLetterProducerConfig(Map<String, ?> overrides) {
      this.producerOverrides = Map.copyOf(Objects.requireNonNull(overrides, "overrides"));
      return this;
    }

    /** Hears of what the consumer did with each record and batch; see {@link ConsumerListener}. */
    public Builder listener(ConsumerListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * Whether batches that are first deliveries run the handler before the inbox records their events (default false:
     * records first, always). A partition's batch is a first delivery when the partition's last poll, since it was
     * assigned to this consumer, was committed without a failure or a duplicate, and the batch comes after it: its
     * records come after every offset this consumer committed, so only a producer's duplicate (a relay that
     * published an event again) or a previous owner's uncommitted offsets can put a duplicate among them. On a store
     * that offers it (PostgreSQL), the inbox then runs the handler first and writes the records with the commit, in
     * the round trips of the handler's transaction alone; when an event was recorded already, the handler throws or
     * the commit fails, it rolls back and runs the batch again in the usual order ({@link
     * Inbox#processBatchAndCommit(String, List, InboxHandler, boolean)}). The handler's writes count once either way,
     * but the handler itself may then run for a producer's duplicate (its writes rolled back), and once more for a
     * failing batch: turn it on when what the handler does outside the transaction tolerates that.
     */
    public Builder firstDeliveryOrder(boolean on) {
      this.firstDeliveryOrder = on;
      return this;
    }

    /**
     * The wall clock of the instants the consumer reports, such as the {@code idem-dlt-attempt-<n>} headers of a dead
     * letter (default {@link Clock#systemUTC()}). Pauses are timed on {@link System#nanoTime()} instead, so that a
     * step of the wall clock neither ends them early nor makes them longer.
     */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Monotonic nanoseconds for pauses (default {@link System#nanoTime()}); for tests. */
    Builder ticker(LongSupplier ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Builds the consumer; {@link #start} connects.
     *
     * @throws IllegalArgumentException when the configuration lacks {@code bootstrap.servers} or {@code group.id},
     *     switches auto-commit on, sets its own deserializers or {@code max.poll.records}, or when no handler is set
     */
    public KafkaInboxConsumer build() {
      if (handler == null) {
        throw new IllegalArgumentException("set the consumer's effect: handler(...)");
      }
      if (name == null) {
        Object group = config.get(ConsumerConfig.GROUP_ID_CONFIG);
        String groupId = group == null ? "" : group.toString();
        if (groupId.length() > 255 || groupId.chars().anyMatch(Character::isISOControl)) {
          throw new IllegalArgumentException("the group id is the inbox's consumer name unless name(...) sets one, and"
              + " must then be at most 255 characters without control characters");
        }
      }
      int instance = INSTANCES.incrementAndGet();
      Map<String, Object> consumer = consumerConfig(instance);
      Map<String, Object> producer = producerConfig(instance);
      // creating the clients checks what the config classes do not (addresses, SASL and TLS settings, interceptor
      // classes) and connects to nothing
      String who = "consumer '" + (name != null ? name : consumer.get(ConsumerConfig.GROUP_ID_CONFIG)) + "'";
      tryConsumer(consumer, who);
      KafkaTransport.tryProducer(producer, "dead-letter producer of " + who);
      return new KafkaInboxConsumer(this, consumer, producer);
    }

    /**
     * Creates a consumer from {@code config} and closes it at once; as {@link KafkaTransport#tryProducer}, a bootstrap
     * server name that does not resolve yet is no error.
     */
    private static void tryConsumer(Map<String, Object> config, String who) {
      RuntimeException refused = createConsumer(config);
      if (refused != null && KafkaTransport.unresolved(refused)) {
        LOG.log(System.Logger.Level.WARNING, who + ": no name in " + ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG
            + " resolves for now");
        Map<String, Object> resolvable = new HashMap<>(config);
        resolvable.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9092");
        refused = createConsumer(resolvable);
      }
      if (refused != null) {
        throw new IllegalArgumentException("Kafka refuses the configuration of " + who + ": "
            + KafkaTransport.hideSecrets(KafkaTransport.causes(refused), config), refused);
      }
    }

    private static RuntimeException createConsumer(Map<String, Object> config) {
      try {
        new KafkaConsumer<String, byte[]>(new HashMap<>(config)).close(Duration.ZERO);
        return null;
      } catch (RuntimeException e) {
        return e;
      }
    }

    Map<String, Object> consumerConfig(int instance) {
      Map<String, Object> c = new LinkedHashMap<>(config);
      for (String key : List.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, ConsumerConfig.GROUP_ID_CONFIG)) {
        if (!c.containsKey(key) || c.get(key).toString().isBlank()) {
          throw new IllegalArgumentException("the consumer configuration needs " + key);
        }
      }
      Object autoCommit = c.get(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG);
      if (autoCommit != null && !"false".equalsIgnoreCase(autoCommit.toString().trim())) {
        throw new IllegalArgumentException(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG + " must be false: offsets are"
            + " committed after the inbox transaction, got '" + autoCommit + "'");
      }
      Object autoCreate = c.get(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG);
      if (autoCreate != null && !"false".equalsIgnoreCase(autoCreate.toString().trim())) {
        throw new IllegalArgumentException(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG + " must be false: start()"
            + " checks that the topics and their dead-letter topics exist, and a look-up must not create a misspelt"
            + " one with the broker's defaults, got '" + autoCreate + "'");
      }
      for (String key : List.of(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG,
          ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ConsumerConfig.MAX_POLL_RECORDS_CONFIG)) {
        if (c.containsKey(key)) {
          throw new IllegalArgumentException(key + " is the consumer's own (string keys, byte values, batchSize(...)"
              + " for max.poll.records): remove it from the configuration");
        }
      }
      c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
      // a topic look-up (partitionsFor) creates a missing topic when the broker allows it, unless told not to
      c.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
      c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
      c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
      c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, batchSize);
      c.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
      c.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
      c.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "idem-inbox-" + (name != null ? name
          : c.get(ConsumerConfig.GROUP_ID_CONFIG)) + "-" + instance);
      return Map.copyOf(c);
    }

    Map<String, Object> producerConfig(int instance) {
      Map<String, Object> p = new LinkedHashMap<>();
      for (Map.Entry<String, Object> e : config.entrySet()) {
        String key = e.getKey();
        if (key.equals(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG) || key.startsWith("security.")
            || key.startsWith("ssl.") || key.startsWith("sasl.") || key.equals("client.dns.lookup")) {
          p.put(key, e.getValue());
        }
      }
      p.putAll(producerOverrides);
      p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
      p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
      p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      p.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "idem-dlt-" + (name != null ? name
          : config.get(ConsumerConfig.GROUP_ID_CONFIG)) + "-" + instance);
      int timeout = (int) sendTimeout.toMillis();
      p.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeout);
      p.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, 0);
      // room for the largest value processed plus its key and the attempt history in headers
      p.putIfAbsent(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, maxPayloadBytes + (1 << 20));
      p.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(30_000, timeout));
      if (!p.containsKey(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG)) {
        // Kafka wants delivery.timeout.ms >= linger.ms + request.timeout.ms
        try {
          long linger = Long.parseLong(p.get(ProducerConfig.LINGER_MS_CONFIG).toString().trim());
          long request = Long.parseLong(p.get(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG).toString().trim());
          p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) Math.min(Integer.MAX_VALUE,
              Math.max(timeout, linger + request)));
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("linger.ms and request.timeout.ms of the dead-letter producer must be"
              + " whole numbers of milliseconds", e);
        }
      }
      return Map.copyOf(p);
    }
  }
}
