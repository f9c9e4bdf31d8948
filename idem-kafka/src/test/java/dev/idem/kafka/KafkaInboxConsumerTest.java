package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.test.DatabaseOutage;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import dev.idem.test.kafka.KafkaBroker;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The exactly-once consumer against the real in-JVM broker and PostgreSQL. */
class KafkaInboxConsumerTest {
  private static final Duration WAIT = Duration.ofSeconds(60);

  private KafkaFixture f;
  private final KafkaFixture.Counts counts = new KafkaFixture.Counts();
  private Inbox inbox;

  @BeforeEach
  void setUp() {
    f = new KafkaFixture(3);
    inbox = f.inbox(counts);
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  @Test
  void everyEventHasOneEffectAndTheOffsetsAreCommittedPastIt() throws Exception {
    List<String> ids = f.publish(600, 17);

    try (KafkaInboxConsumer consumer = f.consumer(inbox).listener(counts).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 600);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(counts.processed.get()).isEqualTo(600);
    assertThat(counts.duplicates.get()).isZero();
    assertThat(counts.batches.get()).isGreaterThanOrEqualTo(3).isLessThan(600);
  }

  @Test
  void aRedeliveredOrRepublishedEventIsSkippedByTheInbox() throws Exception {
    List<String> ids = f.publish(50, 5);
    try (KafkaProducer<String, byte[]> producer = f.producer()) {
      for (int i = 0; i < 20; i++) {
        producer.send(KafkaFixture.record(f.topic, "agg-" + (i % 5), ids.get(i), "{\"n\":" + i + "}"));
      }
      producer.flush();
    }

    try (KafkaInboxConsumer consumer = f.consumer(inbox).listener(counts).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 70);
    }

    assertThat(f.effectCount()).isEqualTo(50);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    assertThat(counts.duplicates.get()).isEqualTo(20);
    assertThat(counts.batchDuplicates.get()).isEqualTo(20);
  }

  /**
   * A handler that records its effect and, per partition in the order of its calls, whether the event's inbox record
   * was already in its transaction: true in the usual order (records first), false in the first-delivery order.
   */
  private InboxHandler orderWatching(Map<Integer, List<Boolean>> recordedFirst) {
    InboxHandler effect = f.recordEffect();
    return (tx, event) -> {
      ConsumerRecord<String, byte[]> r = KafkaInboxConsumer.record(event);
      boolean recorded = TestPostgres.inboxRecorded(tx.unwrap(Connection.class), f.inboxTable, f.group,
          KafkaFixture.eventId(r));
      recordedFirst.computeIfAbsent(r.partition(), p -> new CopyOnWriteArrayList<>()).add(recorded);
      return effect.handle(tx, event);
    };
  }

  @Test
  void inTheFirstDeliveryOrderBatchesAfterACleanPollRunTheHandlerFirstAndCopiesAreStillSkipped()
      throws Exception {
    List<String> ids = f.publish(90, 3);
    try (KafkaProducer<String, byte[]> producer = f.producer()) {
      for (int i = 0; i < 9; i++) { // a relay's copies, published again after the first ones
        producer.send(KafkaFixture.record(f.topic, "agg-" + (i * 10 % 3), ids.get(i * 10),
            "{\"n\":" + i * 10 + "}"));
      }
      producer.flush();
    }
    Map<Integer, List<Boolean>> recordedFirst = new ConcurrentHashMap<>();

    try (KafkaInboxConsumer consumer = f.consumer(inbox).batchSize(5).firstDeliveryOrder(true).listener(counts)
        .handler(orderWatching(recordedFirst)).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 99);
    }

    assertThat(f.effectCount()).isEqualTo(90);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    assertThat(counts.duplicates.get()).isEqualTo(9);
    assertThat(counts.processed.get()).isEqualTo(90);
    assertThat(recordedFirst).isNotEmpty();
    recordedFirst.forEach((partition, calls) -> {
      assertThat(calls.get(0)).as("partition %d: its first batch records first", partition).isTrue();
      assertThat(calls).as("partition %d: later batches run the handler first", partition).contains(false);
    });
  }

  @Test
  void inTheFirstDeliveryOrderTheRecordsARetriedFailureSentBackAreRedeliveredRecordsFirst() throws Exception {
    List<String> ids = f.publish(40, 1); // one key: one partition, in order
    String flaky = ids.get(17);
    Map<String, List<Boolean>> recordedFirst = new ConcurrentHashMap<>();
    InboxHandler effect = f.recordEffect();
    InboxHandler handler = (tx, event) -> {
      String id = KafkaFixture.eventId(KafkaInboxConsumer.record(event));
      List<Boolean> calls = recordedFirst.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>());
      calls.add(TestPostgres.inboxRecorded(tx.unwrap(Connection.class), f.inboxTable, f.group, id));
      if (id.equals(flaky) && calls.size() <= 3) {
        throw new IllegalStateException("flaky");
      }
      return effect.handle(tx, event);
    };

    try (KafkaInboxConsumer consumer = f.consumer(inbox).batchSize(5).firstDeliveryOrder(true).listener(counts)
        .handler(handler).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 40);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    // its batch's first-delivery try, that batch in the usual order, then alone (records first); sent back and
    // paused, it comes again in the next poll, which records first
    assertThat(recordedFirst.get(flaky)).containsExactly(false, true, true, true);
    assertThat(recordedFirst.get(ids.get(18))).as("after the flaky record, in the poll that brought it back")
        .startsWith(true);
    assertThat(recordedFirst.get(ids.get(39))).as("the last record, polls after a clean one").containsExactly(false);
    assertThat(counts.failed.get()).isEqualTo(1);
  }

  @Test
  void byDefaultEveryBatchRecordsFirst() throws Exception {
    List<String> ids = f.publish(30, 3);
    Map<Integer, List<Boolean>> recordedFirst = new ConcurrentHashMap<>();

    try (KafkaInboxConsumer consumer = f.consumer(inbox).batchSize(5).listener(counts)
        .handler(orderWatching(recordedFirst)).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 30);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(recordedFirst.values().stream().mapToInt(List::size).sum()).isEqualTo(30);
    assertThat(recordedFirst.values()).allSatisfy(calls -> assertThat(calls).containsOnly(true));
  }

  @Test
  void aPoisonRecordIsDeadLetteredWithItsAttemptHistoryAfterMaxAttempts() throws Exception {
    List<String> ids = f.publish(30, 1);
    String poison = ids.get(10);
    AtomicInteger poisonCalls = new AtomicInteger();
    InboxHandler effect = f.recordEffect();

    try (KafkaInboxConsumer consumer = f.consumer(inbox).maxAttempts(3).listener(counts)
        .handler((tx, event) -> {
          ConsumerRecord<String, byte[]> r = KafkaInboxConsumer.record(event);
          if (KafkaFixture.eventId(r).equals(poison)) {
            poisonCalls.incrementAndGet();
            throw new IllegalArgumentException("cannot apply " + poison);
          }
          return effect.handle(tx, event);
        }).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 30);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids.stream().filter(i -> !i.equals(poison)).toList());
    // alone three times, after one failed batch unless the first poll brought it alone
    assertThat(poisonCalls.get()).isBetween(3, 4);
    assertThat(counts.deadReasons).containsExactly("handler_failed");
    List<ConsumerRecord<String, byte[]>> dead = KafkaFixture.readAll(f.deadLetterTopic, 1, WAIT);
    assertThat(dead).hasSize(1);
    ConsumerRecord<String, byte[]> d = dead.get(0);
    assertThat(KafkaFixture.header(d, KafkaTransport.EVENT_ID_HEADER)).isEqualTo(poison);
    assertThat(KafkaFixture.header(d, "idem-dlt-reason")).isEqualTo("handler_failed");
    assertThat(KafkaFixture.header(d, "idem-dlt-consumer")).isEqualTo(f.group);
    assertThat(KafkaFixture.header(d, "idem-dlt-topic")).isEqualTo(f.topic);
    assertThat(KafkaFixture.header(d, "idem-dlt-attempts")).isEqualTo("3");
    assertThat(KafkaFixture.header(d, "idem-dlt-attempt-3")).contains("IllegalArgumentException: cannot apply");
    assertThat(d.key()).isEqualTo("agg-0");
    assertThat(inbox.contains(f.group, poison)).isFalse();
  }

  @Test
  void aRecordThatFailsTwiceThenSucceedsHasOneEffectAndIsNotDeadLettered() throws Exception {
    List<String> ids = f.publish(20, 2);
    String flaky = ids.get(5);
    AtomicInteger failures = new AtomicInteger();
    InboxHandler effect = f.recordEffect();

    try (KafkaInboxConsumer consumer = f.consumer(inbox).maxAttempts(5).listener(counts)
        .handler((tx, event) -> {
          ConsumerRecord<String, byte[]> r = KafkaInboxConsumer.record(event);
          if (KafkaFixture.eventId(r).equals(flaky) && failures.incrementAndGet() <= 2) {
            throw new IllegalStateException("flaky");
          }
          return effect.handle(tx, event);
        }).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 20);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(counts.deadLettered.get()).isZero();
    assertThat(counts.failed.get()).isEqualTo(1); // the batch failure falls back to one at a time, then one failure
  }

  @Test
  void aDatabaseOutageIsRetriedWithoutCountingAnAttempt() throws Exception {
    List<String> ids = f.publish(10, 1);
    // connections are refused six times, as by a database that is restarting; the SQL itself is real
    DatabaseOutage outage = DatabaseOutage.refusing(TestPostgres.postgres(), 6);
    Inbox unreliable = Inbox.builder(JdbcInboxStore.builder(outage.dataSource()).dialect(JdbcDialect.POSTGRESQL)
        .table(f.inboxTable).build()).listener(counts).build();

    try (KafkaInboxConsumer consumer = f.consumer(unreliable).maxAttempts(1).listener(counts).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 10);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(outage.refused()).isEqualTo(6);
    assertThat(counts.uncounted.get()).isPositive();
    assertThat(counts.deadLettered.get()).isZero();
  }

  @Test
  void aConnectionErrorOfOneRecordWhileTheDatabaseAnswersCountsAsItsFailure() throws Exception {
    List<String> ids = f.publish(5, 1);
    String broken = ids.get(1);
    InboxHandler effect = f.recordEffect();

    try (KafkaInboxConsumer consumer = f.consumer(inbox).maxAttempts(2).listener(counts).handler((tx, event) -> {
      ConsumerRecord<String, byte[]> r = KafkaInboxConsumer.record(event);
      if (KafkaFixture.eventId(r).equals(broken)) {
        // e.g. the server ended this session after a statement timeout of this record's slow query
        throw new SQLTransientConnectionException("terminating connection due to idle-in-transaction timeout",
            "08006");
      }
      return effect.handle(tx, event);
    }).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 5);
    }

    assertThat(counts.deadReasons).containsExactly("handler_failed");
    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids.stream().filter(i -> !i.equals(broken)).toList());
  }

  @Test
  void aDatabaseThatRefusesEveryonesWritesAndPassingDeadlocksAreNotCountedAsTheRecordsFailures() throws Exception {
    List<String> ids = f.publish(6, 1);
    AtomicInteger calls = new AtomicInteger();
    InboxHandler effect = f.recordEffect();

    try (KafkaInboxConsumer consumer = f.consumer(inbox).maxAttempts(1).listener(counts).handler((tx, event) -> {
      int n = calls.incrementAndGet();
      if (n <= 3) {
        throw new SQLException("cannot execute INSERT in a read-only transaction", "25006");
      }
      if (n <= 6) {
        throw new SQLTransactionRollbackException("deadlock detected", "40P01");
      }
      return effect.handle(tx, event);
    }).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 6);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(counts.deadLettered.get()).isZero();
    assertThat(counts.uncounted.get()).isGreaterThanOrEqualTo(4);
  }

  @Test
  void aListenerThatThrowsAnErrorChangesNothing() throws Exception {
    List<String> ids = f.publish(8, 1);
    ConsumerListener throwing = new ConsumerListener() {
      @Override
      public void committed(String consumer, String source, long nextOffset, int records, int duplicates) {
        counts.committed(consumer, source, nextOffset, records, duplicates);
        throw new AssertionError("a broken meter");
      }
    };

    try (KafkaInboxConsumer consumer = f.consumer(inbox).listener(throwing).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 8);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(counts.duplicates.get()).isZero();
    assertThat(KafkaFixture.readAll(f.deadLetterTopic, 0, Duration.ofSeconds(2))).isEmpty();
  }

  @Test
  void theSameEventIdWithAnotherPayloadIsDeadLetteredAtOnce() throws Exception {
    List<String> ids = f.publish(5, 1);
    try (KafkaProducer<String, byte[]> producer = f.producer()) {
      producer.send(KafkaFixture.record(f.topic, "agg-0", ids.get(2), "{\"n\":\"changed\"}"));
      producer.flush();
    }

    try (KafkaInboxConsumer consumer = f.consumer(inbox).listener(counts).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 6);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(counts.deadReasons).containsExactly("payload_mismatch");
    assertThat(counts.mismatches.get()).isGreaterThanOrEqualTo(1);
    assertThat(KafkaFixture.readAll(f.deadLetterTopic, 1, WAIT)).singleElement()
        .satisfies(d -> assertThat(KafkaFixture.header(d, "idem-dlt-reason")).isEqualTo("payload_mismatch"));
  }

  @Test
  void recordsWithoutAnEventIdOrTooLargeAreDeadLetteredUnlessAFallbackNamesThem() throws Exception {
    try (KafkaProducer<String, byte[]> producer = f.producer()) {
      producer.send(KafkaFixture.record(f.topic, "k", null, "{\"no\":\"id\"}"));
      producer.send(KafkaFixture.record(f.topic, "k", UUID.randomUUID().toString(), "x".repeat(2000)));
      producer.send(KafkaFixture.record(f.topic, "k", "bad\u0001id", "{}"));
      producer.send(KafkaFixture.record(f.topic, "k", UUID.randomUUID().toString(), "{\"ok\":1}"));
      producer.flush();
    }

    try (KafkaInboxConsumer consumer = f.consumer(inbox).maxPayloadBytes(1000).listener(counts).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 4);
    }

    assertThat(f.effectCount()).isEqualTo(1);
    assertThat(counts.deadReasons).containsExactly("missing_event_id", "too_large", "invalid_event_id");
  }

  @Test
  void aRecordWithANullValueIsDeadLetteredWithAnEmptyOneNotATombstone() throws Exception {
    try (KafkaProducer<String, byte[]> producer = f.producer()) {
      producer.send(new ProducerRecord<>(f.topic, null, "k", null, new RecordHeaders()));
      producer.flush();
    }

    try (KafkaInboxConsumer consumer = f.consumer(inbox).listener(counts).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 1);
    }

    assertThat(KafkaFixture.readAll(f.deadLetterTopic, 1, WAIT)).singleElement().satisfies(d -> {
      assertThat(d.value()).as("a null value would be a tombstone on a compacted topic").isEmpty();
      assertThat(KafkaFixture.header(d, "idem-dlt-value-null")).isEqualTo("true");
      assertThat(KafkaFixture.header(d, "idem-dlt-reason")).isEqualTo("missing_event_id");
    });
  }

  @Test
  void anOffsetFallbackProcessesRecordsOfOtherProducersOnce() throws Exception {
    try (KafkaProducer<String, byte[]> producer = f.producer()) {
      for (int i = 0; i < 10; i++) {
        producer.send(KafkaFixture.record(f.topic, "k" + i, null, "{\"n\":" + i + "}"));
      }
      producer.flush();
    }

    try (KafkaInboxConsumer consumer = f.consumer(inbox).eventId(KafkaInboxConsumer.OFFSET_ID).listener(counts)
        .build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 10);
    }

    assertThat(f.effectCount()).isEqualTo(10);
    assertThat(f.effectIds()).allMatch(id -> id.startsWith(f.topic + "-"));
    assertThat(counts.deadLettered.get()).isZero();
  }

  @Test
  void aBatchHandlerGetsTheNewRecordsOfABatchAndAFailingRecordIsIsolated() throws Exception {
    List<String> ids = f.publish(40, 1);
    String poison = ids.get(7);
    List<Integer> batchSizes = new CopyOnWriteArrayList<>();
    Set<String> seen = ConcurrentHashMap.newKeySet();

    try (KafkaInboxConsumer consumer = f.consumer(inbox).maxAttempts(2).listener(counts)
        .handler(new InboxHandler() {
          @Override
          public String handle(StoreTransaction tx, InboxEvent event) throws Exception {
            return handleAll(tx, List.of(event)).get(0);
          }

          @Override
          public List<String> handleAll(StoreTransaction tx, List<InboxEvent> events) throws Exception {
            batchSizes.add(events.size());
            List<String> results = new ArrayList<>();
            for (InboxEvent event : events) {
              String id = KafkaFixture.eventId(KafkaInboxConsumer.record(event));
              if (id.equals(poison)) {
                throw new IllegalStateException("poison");
              }
              TestPostgres.insertEffect(tx.unwrap(Connection.class), f.effects, id);
              seen.add(id);
              results.add("ok");
            }
            return results;
          }
        }).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 40);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids.stream().filter(i -> !i.equals(poison)).toList());
    assertThat(f.eventsWithSeveralEffects()).isZero();
    assertThat(batchSizes).anyMatch(n -> n > 1);
    assertThat(counts.deadReasons).containsExactly("handler_failed");
  }

  @Test
  void anInterruptLeftByAHandlerNeitherStopsNorSpinsTheConsumer() throws Exception {
    List<String> ids = f.publish(20, 1);
    String interrupting = ids.get(4);
    AtomicInteger interrupts = new AtomicInteger();
    InboxHandler effect = f.recordEffect();

    try (KafkaInboxConsumer consumer = f.consumer(inbox).listener(counts).handler((tx, event) -> {
      ConsumerRecord<String, byte[]> r = KafkaInboxConsumer.record(event);
      if (KafkaFixture.eventId(r).equals(interrupting) && interrupts.incrementAndGet() == 1) {
        Thread.currentThread().interrupt();
        throw new InterruptedException("interrupted in the handler");
      }
      return effect.handle(tx, event);
    }).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 20);

      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(counts.pollFailures.get()).isZero();
    assertThat(counts.deadLettered.get()).isZero();
  }

  @Test
  void aRecordWhoseHandlerOverflowsTheStackIsDeadLetteredAndTheConsumerGoesOn() throws Exception {
    List<String> ids = f.publish(10, 1);
    String deep = ids.get(3);
    InboxHandler effect = f.recordEffect();

    try (KafkaInboxConsumer consumer = f.consumer(inbox).maxAttempts(2).listener(counts).handler((tx, event) -> {
      ConsumerRecord<String, byte[]> r = KafkaInboxConsumer.record(event);
      if (KafkaFixture.eventId(r).equals(deep)) {
        throw new StackOverflowError("too deep");
      }
      return effect.handle(tx, event);
    }).build().start()) {
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == 10);

      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids.stream().filter(i -> !i.equals(deep)).toList());
    assertThat(counts.deadReasons).containsExactly("handler_failed");
  }

  @Test
  void aRecordTooLargeForTheDeadLetterTopicIsDeadLetteredWithoutItsValue() throws Exception {
    String big = f.topic + "-big";
    KafkaBroker.createTopic(big, 1, Map.of("max.message.bytes", "5000000"));
    KafkaBroker.createTopic(big + ".dlt", 1);
    String id = UUID.randomUUID().toString();
    Map<String, Object> producerConfig = new HashMap<>(KafkaBroker.clientConfig());
    producerConfig.put("key.serializer", StringSerializer.class.getName());
    producerConfig.put("value.serializer", ByteArraySerializer.class.getName());
    producerConfig.put("max.request.size", "5000000");
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(producerConfig)) {
      producer.send(KafkaFixture.record(big, "k", id, "x".repeat(2_000_000))).get();
      producer.send(KafkaFixture.record(big, "k", UUID.randomUUID().toString(), "{\"ok\":1}")).get();
    }

    try (KafkaInboxConsumer consumer = KafkaInboxConsumer.builder(f.consumerConfig(), inbox, List.of(big))
        .handler(f.recordEffect()).listener(counts).pollTimeout(Duration.ofMillis(100)).build().start()) {
      Eventually.await("both records past", WAIT, () -> committedOn(big), n -> n == 2);
    }

    assertThat(counts.deadReasons).containsExactly("too_large");
    assertThat(f.effectCount()).isEqualTo(1);
    ConsumerRecord<String, byte[]> dead = KafkaFixture.readAll(big + ".dlt", 1, WAIT).get(0);
    assertThat(dead.value()).isEmpty();
    assertThat(KafkaFixture.header(dead, KafkaTransport.EVENT_ID_HEADER)).isEqualTo(id);
    assertThat(KafkaFixture.header(dead, "idem-dlt-reason")).isEqualTo("too_large");
    assertThat(KafkaFixture.header(dead, "idem-dlt-value-dropped")).startsWith("2000000 bytes");
  }

  @Test
  void aFailedDeadLetterSendIsRetriedWithoutRunningTheHandlerAgain() throws Exception {
    List<String> ids = f.publish(5, 1);
    String poison = ids.get(2);
    AtomicInteger poisonCalls = new AtomicInteger();
    InboxHandler effect = f.recordEffect();
    try (Admin admin = KafkaBroker.admin()) {

      try (KafkaInboxConsumer consumer = f.consumer(inbox).maxAttempts(2).sendTimeout(Duration.ofSeconds(1))
          .listener(counts).handler((tx, event) -> {
            ConsumerRecord<String, byte[]> r = KafkaInboxConsumer.record(event);
            if (KafkaFixture.eventId(r).equals(poison)) {
              poisonCalls.incrementAndGet();
              throw new IllegalStateException("poison");
            }
            return effect.handle(tx, event);
          }).build().start()) {
        // the dead-letter topic disappears after the start-up check
        admin.deleteTopics(List.of(f.deadLetterTopic)).all().get(30, TimeUnit.SECONDS);
        Eventually.await("a failed dead-letter send", WAIT, counts.deadLetterFailures::get, n -> n >= 1);
        int callsWhenItFailed = poisonCalls.get();
        KafkaBroker.createTopic(f.deadLetterTopic, 1);
        Eventually.await("every offset committed", WAIT, this::committed, n -> n == 5);

        assertThat(poisonCalls.get()).isEqualTo(callsWhenItFailed);
      }
    }

    assertThat(counts.deadReasons).containsExactly("handler_failed");
    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids.stream().filter(i -> !i.equals(poison)).toList());
  }

  @Test
  void startRefusesMissingTopicsAndBuildRefusesConfigurationThatBreaksExactlyOnce() {
    Map<String, Object> good = f.consumerConfig();
    InboxHandler h = f.recordEffect();

    assertThatThrownBy(() -> KafkaInboxConsumer.builder(good, inbox, List.of(f.topic + "-missing")).handler(h).build()
        .start()).isInstanceOf(IllegalStateException.class).hasMessageContaining("does not exist");
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(good, inbox, List.of(f.topic)).handler(h)
        .deadLetterTopic(t -> t + ".missing").build().start())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("dead-letter topic");
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(Map.of("bootstrap.servers", "x:1", "group.id", "g",
        "enable.auto.commit", "true"), inbox, List.of("t")).handler(h).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("enable.auto.commit");
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(Map.of("bootstrap.servers", "x:1"), inbox, List.of("t"))
        .handler(h).build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("group.id");
    // a broker with auto.create.topics.enable (Kafka's default) would create a misspelt topic on start()'s look-up
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(Map.of("bootstrap.servers", "x:1", "group.id", "g",
        "allow.auto.create.topics", "true"), inbox, List.of("t")).handler(h).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("allow.auto.create.topics must be false");
    assertThat(KafkaInboxConsumer.builder(good, inbox, List.of(f.topic)).handler(h).consumerConfig(0))
        .containsEntry("allow.auto.create.topics", "false");
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(good, inbox, List.of("t")).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("handler");
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(Map.of("bootstrap.servers", "x:1", "group.id", "g",
        "max.poll.records", "5"), inbox, List.of("t")).handler(h).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("batchSize");
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(good, inbox, List.of("bad topic")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> f.consumer(inbox).batchSize(0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(Map.of("bootstrap.servers", "x:1", "group.id", "g".repeat(256)),
        inbox, List.of("t")).handler(h).build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("255");
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(Map.of("bootstrap.servers", "x:1", "group.id", "g",
        "session.timeout.ms", "soon"), inbox, List.of("t")).handler(h).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("session.timeout.ms");
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(Map.of("bootstrap.servers", "localhost", "group.id", "g"),
        inbox, List.of("t")).handler(h).build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("localhost");
    assertThatThrownBy(() -> KafkaInboxConsumer.builder(Map.of("bootstrap.servers", "x:1", "group.id", "g",
        "interceptor.classes", "com.example.Missing"), inbox, List.of("t")).handler(h).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("com.example.Missing");
    assertThatThrownBy(() -> f.consumer(inbox).maxAttempts(0)).isInstanceOf(IllegalArgumentException.class);
  }

  private long committedOn(String topic) {
    try (Admin admin = KafkaBroker.admin()) {
      return admin.listConsumerGroupOffsets(f.group).partitionsToOffsetAndMetadata()
          .get(30, TimeUnit.SECONDS).entrySet().stream()
          .filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
          .mapToLong(e -> e.getValue().offset()).sum();
    } catch (Exception e) {
      return -1;
    }
  }

  private long committed() {
    try {
      return f.committedOffsets();
    } catch (Exception e) {
      return -1;
    }
  }
}
