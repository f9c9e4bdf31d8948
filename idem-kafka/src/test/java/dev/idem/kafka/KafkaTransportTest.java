package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The outbox transport against the real in-JVM broker. */
class KafkaTransportTest {
  private KafkaFixture f;

  @BeforeEach
  void setUp() {
    f = new KafkaFixture(4);
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  private static OutboxMessage message(String type, String aggregateId, String destination) {
    UUID id = UUID.randomUUID();
    return new OutboxMessage(id, type, "order", aggregateId, "{\"order\":\"" + id + "\"}", Map.of("tenant", "t-1"),
        destination, 1, Instant.ofEpochMilli(1_700_000_000_000L));
  }

  @Test
  void anAcknowledgedRecordCarriesTheAggregateIdAsKeyAndTheEventIdInAHeader() {
    OutboxMessage m = message("order.placed", "o-42", "kafka:" + f.topic);

    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig()).name("t1").build()) {
      assertThat(transport.send(m).isDelivered()).isTrue();
    }

    List<ConsumerRecord<String, byte[]>> records = KafkaFixture.readAll(f.topic, 1, Duration.ofSeconds(30));
    assertThat(records).hasSize(1);
    ConsumerRecord<String, byte[]> r = records.get(0);
    assertThat(r.key()).isEqualTo("o-42");
    assertThat(new String(r.value(), StandardCharsets.UTF_8)).isEqualTo(m.payload());
    assertThat(KafkaFixture.header(r, KafkaTransport.EVENT_ID_HEADER)).isEqualTo(m.id().toString());
    assertThat(KafkaFixture.header(r, KafkaTransport.EVENT_TYPE_HEADER)).isEqualTo("order.placed");
    assertThat(KafkaFixture.header(r, KafkaTransport.AGGREGATE_TYPE_HEADER)).isEqualTo("order");
    assertThat(KafkaFixture.header(r, KafkaTransport.CREATED_AT_HEADER)).isEqualTo("1700000000000");
    assertThat(KafkaFixture.header(r, "tenant")).isEqualTo("t-1");
  }

  @Test
  void theTopicComesFromTheDestinationElseTheEventTypeElseTheDefault() throws Exception {
    String other = f.topic + "-other";
    KafkaBroker.createTopic(other, 1);
    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig())
        .topic("order.placed", f.topic).defaultTopic(other).build()) {

      List<DeliveryResult> results = transport.sendAll(List.of(
          message("order.placed", "a", "kafka"),
          message("order.shipped", "b", "kafka"),
          message("order.shipped", "c", "kafka:" + f.topic)));

      assertThat(results).allMatch(DeliveryResult::isDelivered);
    }
    assertThat(KafkaFixture.endOffsets(f.topic, 4)).isEqualTo(2);
    assertThat(KafkaFixture.endOffsets(other, 1)).isEqualTo(1);
  }

  @Test
  void anEventWithNoTopicOrAnInvalidTopicIsDeadAtOnce() {
    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig()).build()) {

      List<DeliveryResult> results = transport.sendAll(List.of(
          message("order.placed", "a", "kafka"),
          message("order.placed", "b", "kafka:not a topic"),
          message("order.placed", "c", "kafka:" + f.topic)));

      assertThat(results.get(0).kind()).isEqualTo(DeliveryResult.Kind.PERMANENT);
      assertThat(results.get(0).error()).hasValueSatisfying(e -> assertThat(e).contains("no Kafka topic"));
      assertThat(results.get(1).kind()).isEqualTo(DeliveryResult.Kind.PERMANENT);
      assertThat(results.get(2).isDelivered()).isTrue();
    }
  }

  @Test
  void aMissingTopicIsRetriedWithinTheSendTimeout() {
    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig())
        .sendTimeout(Duration.ofSeconds(2)).build()) {
      long start = System.nanoTime();

      DeliveryResult result = transport.send(message("order.placed", "a", "kafka:" + f.topic + "-missing"));

      assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
    }
  }

  @Test
  void anUnreachableBrokerIsRetried() {
    try (KafkaTransport transport = KafkaTransport.builder(Map.of("bootstrap.servers", "127.0.0.1:1"))
        .sendTimeout(Duration.ofSeconds(1)).build()) {

      List<DeliveryResult> results = transport.sendAll(List.of(message("order.placed", "a", "kafka:" + f.topic),
          message("order.placed", "b", "kafka:" + f.topic)));

      assertThat(results).allMatch(r -> r.kind() == DeliveryResult.Kind.RETRY);
    }
  }

  @Test
  void recordsOfOneAggregateKeepTheirOrderOnTheirPartition() {
    List<OutboxMessage> messages = new ArrayList<>();
    Map<String, List<String>> sentByAggregate = new HashMap<>();
    for (int i = 0; i < 1000; i++) {
      OutboxMessage m = message("order.placed", "agg-" + (i % 10), "kafka:" + f.topic);
      messages.add(m);
      sentByAggregate.computeIfAbsent(m.aggregateId(), k -> new ArrayList<>()).add(m.id().toString());
    }

    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig()).build()) {
      for (int from = 0; from < messages.size(); from += 100) {
        assertThat(transport.sendAll(messages.subList(from, from + 100))).allMatch(DeliveryResult::isDelivered);
      }
    }

    Map<String, List<String>> readByAggregate = new HashMap<>();
    Map<String, Integer> partitionOf = new HashMap<>();
    for (ConsumerRecord<String, byte[]> r : KafkaFixture.readAll(f.topic, 1000, Duration.ofSeconds(60))) {
      readByAggregate.computeIfAbsent(r.key(), k -> new ArrayList<>())
          .add(KafkaFixture.header(r, KafkaTransport.EVENT_ID_HEADER));
      assertThat(partitionOf.putIfAbsent(r.key(), r.partition())).isIn(null, r.partition());
    }
    assertThat(readByAggregate).isEqualTo(sentByAggregate);
  }

  @Test
  void configurationThatBreaksExactlyOnceIsRefused() {
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "x:1", "acks", "1")).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("acks");
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "x:1", "enable.idempotence", "false"))
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("enable.idempotence");
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "x:1",
        "max.in.flight.requests.per.connection", "6")).build()).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "x:1", "transactional.id", "t"))
        .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("transactional.id");
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("acks", "all")).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bootstrap.servers");
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "x:1")).topic("t", "bad topic"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad topic");
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "x:1"))
        .sendTimeout(Duration.ofMillis(10))).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void theProducerIsIdempotentWithAcksAll() {
    try (KafkaTransport transport = KafkaTransport.builder(Map.of("bootstrap.servers", "x:1", "acks", "-1")).build()) {
      assertThat(transport.producerConfig()).containsEntry("enable.idempotence", "true").containsEntry("acks", "all");
    }
  }
}
