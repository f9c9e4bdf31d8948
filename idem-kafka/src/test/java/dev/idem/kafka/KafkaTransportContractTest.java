package dev.idem.kafka;

import dev.idem.outbox.OutboxTransport;
import dev.idem.test.Eventually;
import dev.idem.test.kafka.KafkaBroker;
import dev.idem.test.outbox.OutboxTransportContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link OutboxTransportContract} on the in-JVM Kafka broker ({@link KafkaBroker}): each destination is a topic of its
 * own with {@value #PARTITIONS} partitions, read back by a consumer assigned to all of them from the start; its outage
 * deletes the topic (the broker creates none by itself), and its end creates it again. The record key is the aggregate
 * id, and a batch keeps each aggregate's order on its partition, as the transport's javadoc promises.
 */
class KafkaTransportContractTest extends OutboxTransportContract {
  private static final int PARTITIONS = 3;
  private static Admin admin;
  private final Map<String, List<Received>> arrived = new ConcurrentHashMap<>();
  private final Map<String, KafkaConsumer<String, byte[]>> readers = new ConcurrentHashMap<>();

  @BeforeAll
  static void connect() {
    admin = KafkaBroker.admin();
  }

  @AfterAll
  static void disconnect() {
    admin.close();
  }

  @Override
  protected boolean ordersPerAggregate() {
    return true;
  }

  @Override
  protected boolean keysByAggregate() {
    return true;
  }

  @Override
  protected String createDestination() {
    String topic = uniqueName("idem-kit-");
    KafkaBroker.createTopic(topic, PARTITIONS);
    return "kafka:" + topic;
  }

  @Override
  protected OutboxTransport createTransport() {
    return KafkaTransport.builder(KafkaBroker.clientConfig()).name("transport-kit").sendTimeout(Duration.ofSeconds(3))
        .build();
  }

  @Override
  protected List<Received> received(String destination) {
    List<Received> seen = arrived.computeIfAbsent(destination, d -> new ArrayList<>());
    KafkaConsumer<String, byte[]> reader = readers.computeIfAbsent(destination, d -> reader(topic(d)));
    for (ConsumerRecord<String, byte[]> r : reader.poll(Duration.ofMillis(200))) {
      Map<String, String> headers = new LinkedHashMap<>();
      for (Header h : r.headers()) {
        headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
      }
      seen.add(new Received(headers.get(KafkaTransport.EVENT_ID_HEADER), r.value(), headers, r.key()));
    }
    return seen;
  }

  @Override
  protected void startOutage(String destination) throws Exception {
    closeReader(destination);
    String topic = topic(destination);
    admin.deleteTopics(List.of(topic)).all().get(60, TimeUnit.SECONDS);
    Eventually.await("topic " + topic + " deleted", WAIT, KafkaTransportContractTest::topics,
        topics -> !topics.contains(topic));
  }

  @Override
  protected void endOutage(String destination) {
    String topic = topic(destination);
    // the broker may still be removing the deleted topic's partitions: it refuses the name until it has
    Eventually.await("topic " + topic + " created again", WAIT, () -> tryCreate(topic), created -> created);
    Eventually.await("topic " + topic + " with leaders", WAIT, () -> leaders(topic), n -> n == PARTITIONS);
  }

  @Override
  protected void deleteDestination(String destination) {
    closeReader(destination);
    deleteQuietly(topic(destination));
  }

  private static KafkaConsumer<String, byte[]> reader(String topic) {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("key.deserializer", StringDeserializer.class.getName());
    config.put("value.deserializer", ByteArrayDeserializer.class.getName());
    config.put("enable.auto.commit", "false");
    config.put("auto.offset.reset", "earliest");
    KafkaConsumer<String, byte[]> consumer = new KafkaConsumer<>(config);
    List<TopicPartition> partitions = new ArrayList<>();
    for (int p = 0; p < PARTITIONS; p++) {
      partitions.add(new TopicPartition(topic, p));
    }
    consumer.assign(partitions);
    consumer.seekToBeginning(partitions);
    return consumer;
  }

  private void closeReader(String destination) {
    KafkaConsumer<String, byte[]> reader = readers.remove(destination);
    if (reader != null) {
      reader.close(Duration.ofSeconds(5));
    }
  }

  private static String topic(String destination) {
    return destination.substring("kafka:".length());
  }

  private static Set<String> topics() {
    try {
      return admin.listTopics().names().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("cannot list the topics", e);
    }
  }

  private static boolean tryCreate(String topic) {
    try {
      admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1))).all().get(10, TimeUnit.SECONDS);
      return true;
    } catch (ExecutionException e) {
      return false; // the name is still taken by the deleted topic
    } catch (Exception e) {
      throw new IllegalStateException("cannot create topic " + topic, e);
    }
  }

  private static int leaders(String topic) {
    try {
      return (int) admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic)
          .partitions().stream().filter(p -> p.leader() != null && !p.leader().isEmpty()).count();
    } catch (Exception e) {
      return 0;
    }
  }

  private static void deleteQuietly(String topic) {
    try {
      admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
        throw new IllegalStateException("cannot delete topic " + topic, e);
      }
    } catch (Exception e) {
      throw new IllegalStateException("cannot delete topic " + topic, e);
    }
  }
}
