package dev.idem.kafka;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxListener;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.Reason;
import dev.idem.test.TestPostgres;
import dev.idem.test.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * One test's world, under names of its own: outbox, inbox and effect tables on PostgreSQL, a topic with its
 * dead-letter topic on the in-JVM broker, and a consumer group. Closing drops the tables and deletes the topics.
 */
final class KafkaFixture implements AutoCloseable {
  final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  final String outboxTable = "kfk_ob_" + suffix;
  final String inboxTable = "kfk_ib_" + suffix;
  final String effects = "kfk_fx_" + suffix;
  final String topic = "idem-test-" + suffix;
  final String deadLetterTopic = topic + ".dlt";
  final String group = "idem-test-group-" + suffix;
  final int partitions;

  KafkaFixture(int partitions) {
    this.partitions = partitions;
    Outbox.builder(JdbcOutboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL)
        .table(outboxTable).createSchemaIfMissing(true).build()).build();
    Inbox.builder(JdbcInboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL).table(inboxTable)
        .createSchemaIfMissing(true).build()).build();
    TestPostgres.createEffectTable(effects);
    KafkaBroker.createTopic(topic, partitions);
    KafkaBroker.createTopic(deadLetterTopic, 1);
  }

  Outbox outbox() {
    return Outbox.builder(JdbcOutboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL)
        .table(outboxTable).build()).build();
  }

  Inbox inbox(InboxListener listener) {
    return Inbox.builder(JdbcInboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL)
        .table(inboxTable).build()).listener(listener).build();
  }

  /** The consumer configuration of this test's group. */
  Map<String, Object> consumerConfig() {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("group.id", group);
    // a killed member leaves the group after 6 s (the broker's minimum) rather than Kafka's default 45 s
    config.put("session.timeout.ms", "6000");
    config.put("heartbeat.interval.ms", "1000");
    return config;
  }

  /** A consumer of this test's topic with short pauses, recording one effect per event id. */
  KafkaInboxConsumer.Builder consumer(Inbox inbox) {
    return KafkaInboxConsumer.builder(consumerConfig(), inbox, List.of(topic))
        .handler(recordEffect())
        .failurePause(Duration.ofMillis(20))
        .pollTimeout(Duration.ofMillis(100));
  }

  /** A handler that records one effect row per record, keyed by its event id header. */
  InboxHandler recordEffect() {
    return (tx, event) -> {
      ConsumerRecord<String, byte[]> r = KafkaInboxConsumer.record(event);
      TestPostgres.insertEffect(tx.unwrap(Connection.class), effects, eventId(r));
      return null;
    };
  }

  static String eventId(ConsumerRecord<String, byte[]> r) {
    var header = r.headers().lastHeader(KafkaTransport.EVENT_ID_HEADER);
    return header == null ? KafkaInboxConsumer.OFFSET_ID.apply(r) : new String(header.value(), StandardCharsets.UTF_8);
  }

  KafkaProducer<String, byte[]> producer() {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("key.serializer", StringSerializer.class.getName());
    config.put("value.serializer", ByteArraySerializer.class.getName());
    config.put("acks", "all");
    return new KafkaProducer<>(config);
  }

  /** Publishes {@code count} events with fresh ids over {@code aggregates} keys; returns their ids in order. */
  List<String> publish(int count, int aggregates) throws Exception {
    List<String> ids = new ArrayList<>(count);
    try (KafkaProducer<String, byte[]> producer = producer()) {
      for (int i = 0; i < count; i++) {
        String id = UUID.randomUUID().toString();
        ids.add(id);
        producer.send(record(topic, "agg-" + (i % aggregates), id, "{\"n\":" + i + "}"));
      }
      producer.flush();
    }
    return ids;
  }

  static ProducerRecord<String, byte[]> record(String topic, String key, String eventId, String payload) {
    RecordHeaders headers = new RecordHeaders();
    if (eventId != null) {
      headers.add(KafkaTransport.EVENT_ID_HEADER, eventId.getBytes(StandardCharsets.UTF_8));
    }
    return new ProducerRecord<>(topic, null, key, payload.getBytes(StandardCharsets.UTF_8), headers);
  }

  long effectCount() {
    return TestPostgres.effectCount(effects);
  }

  long effectCount(String eventId) {
    return TestPostgres.effectCount(effects, eventId);
  }

  /** Event ids that have more than one effect. */
  long eventsWithSeveralEffects() {
    return TestPostgres.eventsWithSeveralEffects(effects);
  }

  List<String> effectIds() {
    return TestPostgres.effectIds(effects);
  }

  /** The sum over partitions of the group's committed offsets. */
  long committedOffsets() throws Exception {
    try (Admin admin = KafkaBroker.admin()) {
      Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
          .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
      return offsets.entrySet().stream().filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
          .mapToLong(e -> e.getValue().offset()).sum();
    }
  }

  /** The group's committed offset of one partition, 0 when none. */
  long committedOffset(int partition) throws Exception {
    try (Admin admin = KafkaBroker.admin()) {
      OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
          .get(30, TimeUnit.SECONDS).get(new TopicPartition(topic, partition));
      return o == null ? 0 : o.offset();
    }
  }

  /** The sum over partitions of the topic's end offsets: how many records it holds. */
  long endOffsets() throws Exception {
    return endOffsets(topic, partitions);
  }

  static long endOffsets(String topic, int partitions) throws Exception {
    try (Admin admin = KafkaBroker.admin()) {
      Map<TopicPartition, OffsetSpec> request = new HashMap<>();
      for (int p = 0; p < partitions; p++) {
        request.put(new TopicPartition(topic, p), OffsetSpec.latest());
      }
      return admin.listOffsets(request).all().get(30, TimeUnit.SECONDS).values().stream()
          .mapToLong(i -> i.offset()).sum();
    }
  }

  /** Reads every record of {@code topicName} (from the beginning) until {@code expected} have arrived. */
  static List<ConsumerRecord<String, byte[]>> readAll(String topicName, int expected, Duration timeout) {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("group.id", "idem-test-reader-" + UUID.randomUUID());
    config.put("auto.offset.reset", "earliest");
    config.put("enable.auto.commit", "false");
    config.put("key.deserializer", StringDeserializer.class.getName());
    config.put("value.deserializer", ByteArrayDeserializer.class.getName());
    List<ConsumerRecord<String, byte[]>> all = new ArrayList<>();
    try (KafkaConsumer<String, byte[]> reader = new KafkaConsumer<>(config)) {
      reader.subscribe(List.of(topicName));
      long deadline = System.nanoTime() + timeout.toNanos();
      while (all.size() < expected && System.nanoTime() < deadline) {
        ConsumerRecords<String, byte[]> records = reader.poll(Duration.ofMillis(200));
        records.forEach(all::add);
      }
    }
    return all;
  }

  static String header(ConsumerRecord<String, byte[]> r, String name) {
    var h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  @Override
  public void close() throws Exception {
    try (Admin admin = KafkaBroker.admin()) {
      admin.deleteTopics(List.of(topic, deadLetterTopic)).all().get(30, TimeUnit.SECONDS);
    } finally {
      TestPostgres.drop(effects, outboxTable + "_attempt", outboxTable, inboxTable);
    }
  }

  /** The partition number of a consumer listener's source, {@code <topic>-<partition>}. */
  static int partition(String source) {
    return Integer.parseInt(source.substring(source.lastIndexOf('-') + 1));
  }

  /** Counts what an inbox and a consumer report. */
  static final class Counts implements InboxListener, ConsumerListener {
    final AtomicInteger processed = new AtomicInteger();
    final AtomicInteger duplicates = new AtomicInteger();
    final AtomicInteger mismatches = new AtomicInteger();
    final AtomicInteger batches = new AtomicInteger();
    final AtomicInteger batchDuplicates = new AtomicInteger();
    final AtomicInteger failed = new AtomicInteger();
    final AtomicInteger uncounted = new AtomicInteger();
    final AtomicInteger deadLettered = new AtomicInteger();
    final AtomicInteger commitFailures = new AtomicInteger();
    final AtomicInteger deadLetterFailures = new AtomicInteger();
    final AtomicInteger pollFailures = new AtomicInteger();
    /** The reasons of the records sent to the dead-letter topic: given up on, or rejected. */
    final List<String> deadReasons = new CopyOnWriteArrayList<>();

    @Override
    public void processed(String consumer) {
      processed.incrementAndGet();
    }

    @Override
    public void duplicate(String consumer) {
      duplicates.incrementAndGet();
    }

    @Override
    public void payloadMismatch(String consumer, String eventId) {
      mismatches.incrementAndGet();
    }

    @Override
    public void committed(String consumer, String source, long nextOffset, int records, int dups) {
      batches.incrementAndGet();
      batchDuplicates.addAndGet(dups);
    }

    @Override
    public void answerFailed(String consumer, String source, String messageId, Throwable error) {
      commitFailures.incrementAndGet();
    }

    @Override
    public void retried(String consumer, String source, String messageId, Decision decision, Throwable error) {
      if (decision.counted()) {
        failed.incrementAndGet();
      } else {
        uncounted.incrementAndGet();
      }
    }

    @Override
    public void paused(String consumer, String source, String messageId, Decision decision, Throwable error) {
      uncounted.incrementAndGet();
    }

    @Override
    public void deadLetterFailed(String consumer, String source, String messageId, Throwable error) {
      deadLetterFailures.incrementAndGet();
    }

    @Override
    public void receiveFailed(String consumer, String source, Throwable error) {
      pollFailures.incrementAndGet();
    }

    @Override
    public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
      deadLettered.incrementAndGet();
      deadReasons.add(decision.reason().code());
    }

    @Override
    public void rejected(String consumer, String source, String messageId, Reason reason, String detail) {
      // on Kafka a rejected record goes to the dead-letter topic too
      deadLettered.incrementAndGet();
      deadReasons.add(reason.code());
    }
  }
}
