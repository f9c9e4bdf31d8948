package dev.idem.spring.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.kafka.KafkaInboxConsumer;
import dev.idem.kafka.KafkaTransport;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import dev.idem.test.kafka.KafkaBroker;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application whose Kafka inbox consumer comes from properties alone, on the in-JVM Kafka broker and
 * the local PostgreSQL, with a topic, a dead-letter topic, a group and tables of its own: each event id takes effect
 * once however often it is published, a poison record goes to the configured dead-letter topic with its attempt
 * history, offsets are committed under the consumer's name as group id, and the meters count it all.
 */
class KafkaConsumersStarterTest {
  private static final Duration DEADLINE = Duration.ofSeconds(60);
  private static final int PARTITIONS = 3;

  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String name = "billing-" + suffix;
  private final String effects = "cst_kfk_fx_" + suffix;
  private final String topic = "idem-starter-" + suffix;
  private final String deadLetterTopic = "idem-starter-dead-" + suffix;
  private ConfigurableApplicationContext context;

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (context != null) {
        context.close();
      }
      try (Admin admin = KafkaBroker.admin()) {
        admin.deleteTopics(List.of(topic, deadLetterTopic)).all().get(30, TimeUnit.SECONDS);
      }
    } finally {
      ConsumersApp.dropTables("cst_kfk_" + suffix, effects);
    }
  }

  private ConfigurableApplicationContext start() {
    return start("recordEffect");
  }

  private ConfigurableApplicationContext start(String handler, String... more) {
    String consumer = "idem.consumers." + name;
    List<String> properties = new ArrayList<>(List.of(
        "idem.consumers.kafka.bootstrap-servers=" + KafkaBroker.bootstrapServers(),
        "idem.consumers.kafka.properties.auto.offset.reset=earliest",
        consumer + ".handler=" + handler,
        consumer + ".kafka.topic=" + topic,
        consumer + ".kafka.dead-letter-topic=" + deadLetterTopic,
        consumer + ".kafka.max-attempts=2",
        consumer + ".kafka.failure-pause=20ms",
        consumer + ".kafka.poll-timeout=100ms"));
    properties.addAll(List.of(more));
    return ConsumersApp.runOnPostgres("cst_kfk_" + suffix, effects, properties.toArray(String[]::new));
  }

  private static ProducerRecord<String, byte[]> record(String topic, String key, String eventId, String payload) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(KafkaTransport.EVENT_ID_HEADER, eventId.getBytes(StandardCharsets.UTF_8));
    return new ProducerRecord<>(topic, null, key, payload.getBytes(StandardCharsets.UTF_8), headers);
  }

  private double counter(String meter, String... tags) {
    Counter c = context.getBean(MeterRegistry.class).find(meter).tag("consumer", name).tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void eachEventIdTakesEffectOnceAndAPoisonRecordIsDeadLetteredWithItsAttempts() throws Exception {
    TestPostgres.createEffectTable(effects);
    KafkaBroker.createTopic(topic, PARTITIONS);
    KafkaBroker.createTopic(deadLetterTopic, 1);
    context = start();
    assertThat(context.getBean(InboxConsumerLifecycle.class).consumer()).get()
        .isInstanceOf(KafkaInboxConsumer.class);

    int n = 60;
    List<String> ids = new ArrayList<>();
    String poison = UUID.randomUUID().toString();
    try (KafkaProducer<String, byte[]> producer = producer()) {
      for (int i = 0; i < n; i++) {
        String id = UUID.randomUUID().toString();
        ids.add(id);
        producer.send(record(topic, "order-" + i, id, "{\"n\":" + i + "}"));
        // published twice, as a relay that crashed after sending does: the same event id again
        producer.send(record(topic, "order-" + i, id, "{\"n\":" + i + "}"));
      }
      producer.send(record(topic, "order-poison", poison, "poison"));
      producer.flush();
    }

    Eventually.await("every event took effect", DEADLINE, () -> TestPostgres.effectCount(effects), c -> c >= n);
    ConsumerRecord<String, byte[]> dead = Eventually.await("the poison record is dead-lettered", DEADLINE,
        this::deadLetter, r -> r != null);
    Eventually.await("the offsets of every record are committed under the consumer's name", DEADLINE,
        this::committedOffsets, c -> c == 2L * n + 1);
    Eventually.await("every record counted", DEADLINE,
        () -> counter("idem.consumer.processed") + counter("idem.consumer.duplicates"), c -> c >= 2 * n);

    assertThat(TestPostgres.effectCount(effects)).isEqualTo(n);
    assertThat(TestPostgres.eventsWithSeveralEffects(effects)).isZero();
    assertThat(TestPostgres.effectIds(effects)).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(TestPostgres.effectCount(effects, poison)).isZero();
    assertThat(header(dead, KafkaTransport.EVENT_ID_HEADER)).isEqualTo(poison);
    assertThat(header(dead, "idem-dlt-reason")).isEqualTo("handler_failed");
    assertThat(header(dead, "idem-dlt-consumer")).isEqualTo(name);
    assertThat(header(dead, "idem-dlt-attempts")).isEqualTo("2");
    assertThat(header(dead, "idem-dlt-attempt-1")).contains("poison message " + poison);
    assertThat(header(dead, "idem-dlt-attempt-2")).contains("poison message " + poison);

    assertThat(counter("idem.consumer.processed")).isEqualTo(n);
    assertThat(counter("idem.consumer.duplicates")).isEqualTo(n);
    assertThat(counter("idem.consumer.dead.lettered", "reason", "handler_failed")).isEqualTo(1);
    assertThat(counter("idem.consumer.failures", "reason", "handler_failed")).isEqualTo(1);
    assertThat(counter("idem.consumer.paused")).isZero();
  }

  @Test
  void theFirstDeliveryOrderPropertyTakesABatchAfterACleanCommitInThatOrder() throws Exception {
    TestPostgres.createEffectTable(effects);
    KafkaBroker.createTopic(topic, 1);
    KafkaBroker.createTopic(deadLetterTopic, 1);
    context = start("recordInboxOrder", "idem.consumers." + name + ".kafka.first-delivery-order=true");
    String first = UUID.randomUUID().toString();
    String second = UUID.randomUUID().toString();
    try (KafkaProducer<String, byte[]> producer = producer()) {
      producer.send(record(topic, "order", first, "{}")).get(30, TimeUnit.SECONDS);
      Eventually.await("the first record took effect", DEADLINE, () -> TestPostgres.effectCount(effects), c -> c == 1);
      Eventually.await("its offset is committed", DEADLINE, this::committedOffsets, c -> c == 1L);
      producer.send(record(topic, "order", second, "{}")).get(30, TimeUnit.SECONDS);
      Eventually.await("the second record took effect", DEADLINE, () -> TestPostgres.effectCount(effects),
          c -> c == 2);
      // a producer's copy of the second: tried in the first-delivery order too, it is still a duplicate
      producer.send(record(topic, "order", second, "{}")).get(30, TimeUnit.SECONDS);
    }
    Eventually.await("the copy was counted as a duplicate", DEADLINE, () -> counter("idem.consumer.duplicates"),
        c -> c == 1);
    Eventually.await("every offset is committed", DEADLINE, this::committedOffsets, c -> c == 3L);

    // the partition's first batch since its assignment takes the usual order (the inbox row before the handler);
    // after that batch committed cleanly, the next one is taken as a first delivery (the handler before the row)
    assertThat(TestPostgres.effectIds(effects)).containsExactlyInAnyOrder("recorded:" + first, "first:" + second);
    assertThat(counter("idem.consumer.processed")).isEqualTo(2);
  }

  private static KafkaProducer<String, byte[]> producer() {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("key.serializer", StringSerializer.class.getName());
    config.put("value.serializer", ByteArraySerializer.class.getName());
    config.put("acks", "all");
    return new KafkaProducer<>(config);
  }

  private long committedOffsets() {
    try (Admin admin = KafkaBroker.admin()) {
      Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(name)
          .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
      return offsets.values().stream().mapToLong(OffsetAndMetadata::offset).sum();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private ConsumerRecord<String, byte[]> deadLetter() {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("key.deserializer", StringDeserializer.class.getName());
    config.put("value.deserializer", ByteArrayDeserializer.class.getName());
    try (KafkaConsumer<String, byte[]> reader = new KafkaConsumer<>(config)) {
      TopicPartition partition = new TopicPartition(deadLetterTopic, 0);
      reader.assign(List.of(partition));
      reader.seekToBeginning(List.of(partition));
      for (ConsumerRecord<String, byte[]> r : reader.poll(Duration.ofMillis(500))) {
        return r;
      }
      return null;
    }
  }

  private static String header(ConsumerRecord<String, byte[]> r, String name) {
    var h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }
}
