package dev.idem.bench.outbox;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.kafka.KafkaInboxConsumer;
import dev.idem.kafka.KafkaTransport;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.consumer.ConsumerListener;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Consumer throughput with the inbox on PostgreSQL against the same consumer without it, side by side in one run.
 *
 * <p>A Kafka broker runs in a JVM of its own ({@link KafkaBenchBroker}); a topic of one partition is filled once with
 * {@code --events} records (256 B JSON, the {@code idem-event-id} header: a UUIDv7, as {@link KafkaTransport} sends the
 * outbox's ids, or with {@code --ids v4} a random UUID, as a foreign producer might). Every measurement reads the whole
 * topic with a new consumer group, {@code max.poll.records} = {@code --batch}, and for each poll opens one PostgreSQL
 * transaction, applies the effects (one {@code INSERT} per record into an effect table), commits, then commits the
 * offset. The clock runs from subscribing to the commit of the transaction of the last record.
 *
 * <ul>
 *   <li>{@code baseline}: that loop written by hand, no inbox.</li>
 *   <li>{@code inbox}: {@link KafkaInboxConsumer}: the same, plus the inbox rows of the batch written in one statement
 *       ({@link Inbox#processBatch}) before the effects.</li>
 *   <li>{@code inbox, first-delivery order}: the same with {@link KafkaInboxConsumer.Builder#firstDeliveryOrder}
 *       on: after a partition's first batch, the handler runs first and the inbox rows go with the commit.</li>
 *   <li>{@code inbox 1x1} (with {@code --one-by-one true}): the hand-written loop calling {@link Inbox#process} once
 *       per record in the batch's transaction, i.e. an inbox row (insert, then update) per record.</li>
 * </ul>
 * Effects come in two styles ({@code --effects}): {@code per-record}, one {@code executeUpdate} per record (what an
 * {@link InboxHandler} of one record does), and {@code batched}, one JDBC batch for the records of a poll (what a
 * handler overriding {@link InboxHandler#handleAll} does; the pool sets {@code reWriteBatchedInserts}, so that batch is
 * one multi-row insert). The inbox and effect tables hold {@code --prefill} rows from the start, analysed. Variants
 * alternate order between repeats; one priming run of each variant is discarded. CPU per event is read from
 * {@code /proc} (this JVM, the PostgreSQL backends of its pool, and the broker's JVM apart).
 *
 * <pre>
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.outbox.KafkaInboxBench [--events 100000] [--batch 100]
 *     [--repeats 3] [--effects per-record,batched] [--prefill 100000] [--one-by-one true] [--ids v7|v4]
 * </pre>
 */
public final class KafkaInboxBench implements ConsumerComparison.Consumers {
  private final int events;
  private final int batch;
  private final String bootstrap;
  private final InboxTables tables;
  private final String topic;
  private final Inbox inbox;
  private final boolean timeOrderedIds;

  private KafkaInboxBench(int events, int batch, String bootstrap, InboxTables tables, String topic,
      boolean timeOrderedIds) {
    this.events = events;
    this.batch = batch;
    this.bootstrap = bootstrap;
    this.tables = tables;
    this.topic = topic;
    this.timeOrderedIds = timeOrderedIds;
    this.inbox = tables.inbox;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> f = BenchSupport.flags(args);
    int events = Integer.parseInt(f.getOrDefault("events", "100000"));
    int batch = Integer.parseInt(f.getOrDefault("batch", "100"));
    int repeats = Integer.parseInt(f.getOrDefault("repeats", "3"));
    int prefill = Integer.parseInt(f.getOrDefault("prefill", "100000"));
    boolean oneByOne = Boolean.parseBoolean(f.getOrDefault("one-by-one", "true"));
    String ids = f.getOrDefault("ids", "v7");
    if (!ids.equals("v7") && !ids.equals("v4")) {
      throw new IllegalArgumentException("--ids must be v7 or v4, got " + ids);
    }
    List<String> styles = List.of(f.getOrDefault("effects", "per-record,batched").split(","));
    try (KafkaBenchBroker.Running broker = KafkaBenchBroker.start();
        InboxTables tables = InboxTables.create(f, "kbench", prefill, "kafka:prefill")) {
      String topic = "idem-bench-" + UUID.randomUUID().toString().substring(0, 8);
      KafkaInboxBench bench = new KafkaInboxBench(events, batch, broker.bootstrap(), tables, topic, ids.equals("v7"));
      System.out.println(BenchSupport.fmt("Kafka inbox benchmark: %d events, batch %d, %d repeats, prefill %d,"
          + " event ids UUID%s, load %s", events, batch, repeats, prefill, ids, BenchSupport.loadAverage()));
      broker.createTopics(List.of(topic, topic + ".dlt"), 1);
      broker.publish(topic, events, bench.timeOrderedIds);
      List<String> variants = new ArrayList<>(List.of(ConsumerComparison.BASELINE, "inbox",
          ConsumerComparison.FIRST_DELIVERIES));
      if (oneByOne) {
        variants.add("inbox 1x1");
      }
      new ConsumerComparison(tables, events, broker::cpuTicks).compare(bench, styles, variants, repeats);
    }
  }

  @Override
  public long consume(String variant, String style) throws Exception {
    String group = "bench-" + UUID.randomUUID();
    boolean firstDeliveryOrder = variant.equals(ConsumerComparison.FIRST_DELIVERIES);
    return variant.equals("inbox") || firstDeliveryOrder ? runInbox(group, style, firstDeliveryOrder)
        : runHandWritten(group, style, variant.equals("inbox 1x1"));
  }

  private Map<String, Object> consumerConfig(String group) {
    Map<String, Object> c = new HashMap<>();
    c.put("bootstrap.servers", bootstrap);
    c.put("group.id", group);
    return c;
  }

  /** Runs {@link KafkaInboxConsumer} until the last record's transaction committed; returns that moment. */
  private long runInbox(String group, String style, boolean firstDeliveryOrder) throws Exception {
    CountDownLatch done = new CountDownLatch(1);
    AtomicLong end = new AtomicLong();
    ConsumerListener listener = new ConsumerListener() {
      @Override
      public void committed(String consumer, String source, long nextOffset, int records, int duplicates) {
        if (nextOffset >= events) {
          end.set(System.nanoTime());
          done.countDown();
        }
      }
    };
    InboxHandler perRecord = (tx, event) -> {
      tables.applyEffect(tx.unwrap(Connection.class), eventId(KafkaInboxConsumer.record(event)));
      return null;
    };
    InboxHandler batched = new InboxHandler() {
      @Override
      public String handle(StoreTransaction tx, InboxEvent event) throws Exception {
        return perRecord.handle(tx, event);
      }

      @Override
      public List<String> handleAll(StoreTransaction tx, List<InboxEvent> fresh) throws Exception {
        try (PreparedStatement ps = tx.unwrap(Connection.class).prepareStatement(tables.effectInsert())) {
          for (InboxEvent event : fresh) {
            ps.setString(1, eventId(KafkaInboxConsumer.record(event)));
            ps.addBatch();
          }
          ps.executeBatch();
        }
        return null;
      }
    };
    KafkaInboxConsumer.Builder b = KafkaInboxConsumer.builder(consumerConfig(group), inbox, List.of(topic))
        .batchSize(batch).firstDeliveryOrder(firstDeliveryOrder).listener(listener)
        .handler(style.equals("batched") ? batched : perRecord);
    try (KafkaInboxConsumer consumer = b.build().start()) {
      if (!done.await(10, TimeUnit.MINUTES)) {
        throw new IllegalStateException("the inbox consumer did not finish within 10 minutes");
      }
    }
    return end.get();
  }

  /** The same loop by hand: poll, one transaction per partition batch, offset commit after it. */
  private long runHandWritten(String group, String style, boolean inboxOneByOne) throws Exception {
    Map<String, Object> config = consumerConfig(group);
    config.put("enable.auto.commit", "false");
    config.put("key.deserializer", StringDeserializer.class.getName());
    config.put("value.deserializer", ByteArrayDeserializer.class.getName());
    config.put("max.poll.records", batch);
    config.put("auto.offset.reset", "earliest");
    config.put("isolation.level", "read_committed");
    long end = 0;
    long next = 0;
    try (KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config)) {
      consumer.subscribe(List.of(topic));
      while (next < events) {
        ConsumerRecords<String, byte[]> records = consumer.poll(Duration.ofMillis(500));
        for (TopicPartition tp : records.partitions()) {
          List<ConsumerRecord<String, byte[]>> rs = records.records(tp);
          try (Connection c = tables.pool.getConnection()) {
            c.setAutoCommit(false);
            if (inboxOneByOne) {
              for (ConsumerRecord<String, byte[]> r : rs) {
                InboxEvent event = new InboxEvent(eventId(r), "kafka:" + topic, r.value());
                inbox.process(JdbcTransaction.of(c), group, event, (tx, e) -> {
                  tables.applyEffect(tx.unwrap(Connection.class), eventId(r));
                  return null;
                });
              }
            } else if (style.equals("batched")) {
              try (PreparedStatement ps = c.prepareStatement(tables.effectInsert())) {
                for (ConsumerRecord<String, byte[]> r : rs) {
                  ps.setString(1, eventId(r));
                  ps.addBatch();
                }
                ps.executeBatch();
              }
            } else {
              for (ConsumerRecord<String, byte[]> r : rs) {
                tables.applyEffect(c, eventId(r)); // the same code as the inbox variant's handler of one record
              }
            }
            c.commit();
            c.setAutoCommit(true);
          } catch (SQLException e) {
            throw new IllegalStateException(e);
          }
          next = rs.get(rs.size() - 1).offset() + 1;
          if (next >= events) {
            end = System.nanoTime();
          }
          consumer.commitSync(Map.of(tp, new OffsetAndMetadata(next)));
        }
      }
    }
    return end;
  }

  private static String eventId(ConsumerRecord<String, byte[]> r) {
    return new String(r.headers().lastHeader(KafkaTransport.EVENT_ID_HEADER).value(), StandardCharsets.UTF_8);
  }
}
