package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import dev.idem.test.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The listener contract on the in-JVM Kafka broker: a topic of two partitions, its dead-letter topic
 * {@code <topic>.dlt} and a group of the test's own. Dead letters carry Idem's {@code idem-dlt-*} headers.
 */
abstract class KafkaListenersContract extends ListenersContract {
  static final int PARTITIONS = 2;

  final String topic = "listeners-" + suffix;
  final String deadLetters = topic + ".dlt";
  private KafkaProducer<String, String> producer;

  @Override
  List<String> broker() {
    createTopics(topic);
    return kafkaProperties(topic);
  }

  /** The application's properties for a listener of {@code topic}, in a group of the same name. */
  static List<String> kafkaProperties(String topic) {
    return List.of("spring.kafka.bootstrap-servers=" + KafkaBroker.bootstrapServers(),
        "spring.kafka.consumer.auto-offset-reset=earliest", "listeners.kafka.topic=" + topic,
        "listeners.kafka.group=" + topic);
  }

  @Override
  void publish(String id, String payload) {
    if (producer == null) {
      producer = producer();
    }
    producer.send(record(topic, id, payload));
    producer.flush();
  }

  static KafkaProducer<String, String> producer() {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("key.serializer", StringSerializer.class.getName());
    config.put("value.serializer", StringSerializer.class.getName());
    config.put("acks", "all");
    return new KafkaProducer<>(config);
  }

  /** A record of {@code payload} keyed by its id, with the {@code idem-event-id} header unless {@code id} is null. */
  static ProducerRecord<String, String> record(String topic, String id, String payload) {
    RecordHeaders headers = new RecordHeaders();
    if (id != null) {
      headers.add(KafkaRecords.EVENT_ID_HEADER, id.getBytes(StandardCharsets.UTF_8));
    }
    return new ProducerRecord<>(topic, null, id == null ? "no-id" : id, payload, headers);
  }

  @Override
  DeadLetter awaitDeadLetter() {
    ConsumerRecord<String, String> r = Eventually.await("a record on " + deadLetters, DEADLINE,
        this::firstDeadLetter, found -> found != null);
    Map<String, Object> headers = new LinkedHashMap<>();
    for (Header h : r.headers()) {
      headers.put(h.key(), new String(h.value(), StandardCharsets.UTF_8));
    }
    return new DeadLetter((String) headers.get(KafkaRecords.EVENT_ID_HEADER), r.value(), headers);
  }

  private ConsumerRecord<String, String> firstDeadLetter() {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("key.deserializer", StringDeserializer.class.getName());
    config.put("value.deserializer", StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> reader = new KafkaConsumer<>(config)) {
      TopicPartition partition = new TopicPartition(deadLetters, 0);
      reader.assign(List.of(partition));
      reader.seekToBeginning(List.of(partition));
      for (ConsumerRecord<String, String> r : reader.poll(Duration.ofMillis(500))) {
        return r;
      }
      return null;
    }
  }

  @Override
  void assertAttemptsTold(DeadLetter dead, int attempts) {
    assertThat(dead.headers()).containsEntry("idem-dlt-reason", "handler_failed")
        .containsEntry("idem-dlt-consumer", CONSUMER).containsEntry("idem-dlt-topic", topic)
        .containsEntry("idem-dlt-attempts", Integer.toString(attempts))
        .doesNotContainKey("idem-dlt-attempt-" + (attempts + 1));
    for (int i = 1; i <= attempts; i++) {
      assertThat((String) dead.headers().get("idem-dlt-attempt-" + i)).contains("poison message " + dead.id());
    }
  }

  @Override
  void assertRefusalTold(DeadLetter dead) {
    assertThat(dead.headers()).containsEntry("idem-dlt-reason", "missing_event_id")
        .containsEntry("idem-dlt-attempts", "0").doesNotContainKey(KafkaRecords.EVENT_ID_HEADER);
  }

  @Override
  void stopAndAssertAllAcknowledged() {
    Eventually.await("the group's offsets committed to the end of " + topic, DEADLINE,
        () -> committed(topic, topic), c -> c == endOffsets(topic));
    context.close();
    context = null;
  }

  /** The sum of the offsets {@code group} committed on {@code topic}. */
  static long committed(String group, String topic) {
    try (Admin admin = KafkaBroker.admin()) {
      Map<TopicPartition, OffsetAndMetadata> offsets = admin.listConsumerGroupOffsets(group)
          .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
      return offsets.entrySet().stream().filter(e -> e.getKey().topic().equals(topic) && e.getValue() != null)
          .mapToLong(e -> e.getValue().offset()).sum();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The sum of the end offsets of {@code topic}'s partitions. */
  static long endOffsets(String topic) {
    try (Admin admin = KafkaBroker.admin()) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (int p = 0; p < PARTITIONS; p++) {
        latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
      }
      return admin.listOffsets(latest).all().get(10, TimeUnit.SECONDS).values().stream()
          .mapToLong(info -> info.offset()).sum();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  void dropBroker() throws Exception {
    if (producer != null) {
      producer.close();
    }
    deleteTopics(topic);
  }

  /** Creates {@code topic} and its dead-letter topic. */
  static void createTopics(String topic) {
    KafkaBroker.createTopic(topic, PARTITIONS);
    KafkaBroker.createTopic(topic + ".dlt", 1);
  }

  /** Deletes {@code topic} and its dead-letter topic. */
  static void deleteTopics(String topic) throws Exception {
    try (Admin admin = KafkaBroker.admin()) {
      admin.deleteTopics(List.of(topic, topic + ".dlt")).all().get(30, TimeUnit.SECONDS);
    }
  }
}
