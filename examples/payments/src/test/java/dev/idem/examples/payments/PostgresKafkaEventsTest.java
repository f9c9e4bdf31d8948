package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.outbox.KafkaEvents;
import dev.idem.kafka.KafkaTransport;
import dev.idem.test.Eventually;
import dev.idem.test.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The service's events on Kafka: the service on PostgreSQL (a schema of its own) with {@code payments.kafka.*} aimed
 * at the in-JVM broker ({@link KafkaBroker}), payments and refunds made over HTTP, and the topics read back with a
 * plain consumer. The tenant has no webhook endpoints: Kafka does not depend on them. Each type has its own topic,
 * named each way the settings allow: {@code topics[payment.succeeded]} (brackets), {@code topics.payment.declined}
 * (plain) and {@code default-topic} (for {@code refund.succeeded}). Topics and tenant are unique to the run.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresKafkaEventsTest {
  private static final Duration DEADLINE = Duration.ofSeconds(60);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final String run = PaymentsServiceContract.suffix();
  private final String succeededTopic = "payments-succeeded-" + run;
  private final String declinedTopic = "payments-declined-" + run;
  private final String defaultTopic = "payments-other-" + run;
  private final Caller tenant = new Caller("sk_kafka_" + run, "kafka_" + run);
  private DatabaseOfItsOwn database;
  private RunningService service;

  @BeforeAll
  void start() {
    String servers = KafkaBroker.bootstrapServers();
    KafkaBroker.createTopic(succeededTopic, 3);
    KafkaBroker.createTopic(declinedTopic, 1);
    KafkaBroker.createTopic(defaultTopic, 1);
    database = DatabaseOfItsOwn.postgres();
    service = RunningService.start(
        "--spring.datasource.url=" + database.jdbcUrl(),
        "--spring.datasource.username=" + database.user(),
        "--payments.api-keys." + tenant.apiKey() + "=" + tenant.tenant(),
        "--payments.outbox.poll-interval=50ms",
        "--payments.kafka.bootstrap-servers=" + servers,
        "--payments.kafka.topics[payment.succeeded]=" + succeededTopic,
        "--payments.kafka.topics.payment.declined=" + declinedTopic,
        "--payments.kafka.default-topic=" + defaultTopic,
        "--payments.kafka.send-timeout=10s",
        "--payments.kafka.properties[linger.ms]=0");
  }

  @AfterAll
  void stop() {
    try {
      if (service != null) {
        service.close();
      }
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }

  @Test
  void theTransportIsNamedPaymentsAndTakesTheExtraProducerSettings() {
    KafkaTransport transport = service.context().getBean(KafkaTransport.class);

    assertThat(transport.name()).isEqualTo("payments");
    assertThat(transport.producerConfig()).containsEntry("linger.ms", "0").containsEntry("acks", "all")
        .containsEntry("enable.idempotence", "true");
  }

  @Test
  void eachEventIsOneRecordKeyedByItsPaymentOrRefundWithTheOutboxEventIdAndTheEnvelope() {
    Answer paid = pay(PaymentsServiceContract.key(), PaymentsServiceContract.account("kafka"), 1500);
    Answer declined = pay(PaymentsServiceContract.key(), "acct_declined_" + run, 300);
    String paymentId = paid.json().path("id").asString();
    String declinedId = declined.json().path("payment_id").asString();
    Answer refunded = service.post("/refunds", tenant.apiKey(), PaymentsServiceContract.key(),
        "{\"payment_id\":\"" + paymentId + "\",\"amount\":500}");
    String refundId = refunded.json().path("id").asString();
    Map<String, String> eventIds = Map.of(paymentId, awaitDelivered(paymentId), declinedId,
        awaitDelivered(declinedId), refundId, awaitDelivered(refundId));

    List<ConsumerRecord<String, String>> records = readToTheEnd(succeededTopic, declinedTopic, defaultTopic);

    assertThat(paid.status()).as(paid.toString()).isEqualTo(201);
    assertThat(declined.status()).as(declined.toString()).isEqualTo(402);
    assertThat(refunded.status()).as(refunded.toString()).isEqualTo(201);
    assertThat(records.stream().filter(r -> eventIds.containsKey(r.key()))).as("one record per event").hasSize(3);
    assertRecord(single(records, paymentId), succeededTopic, "payment.succeeded", eventIds.get(paymentId));
    assertRecord(single(records, declinedId), declinedTopic, "payment.declined", eventIds.get(declinedId));
    assertRecord(single(records, refundId), defaultTopic, "refund.succeeded", eventIds.get(refundId));
    assertThat(envelope(single(records, paymentId)).path("data").path("status").asString()).isEqualTo("captured");
    assertThat(envelope(single(records, paymentId)).path("data").path("amount").asLong()).isEqualTo(1500);
    assertThat(envelope(single(records, declinedId)).path("data").path("status").asString()).isEqualTo("declined");
    assertThat(envelope(single(records, refundId)).path("data").path("payment_id").asString()).isEqualTo(paymentId);
    assertThat(envelope(single(records, refundId)).path("data").path("amount").asLong()).isEqualTo(500);
    assertThat(service.count("SELECT COUNT(*) FROM idem_outbox WHERE destination LIKE 'webhook:%' AND aggregate_id"
        + " IN (?, ?, ?)", paymentId, declinedId, refundId)).as("the tenant has no webhook endpoints").isZero();
  }

  @Test
  void aReplayedRequestWritesNoSecondEventAndPublishesNoSecondRecord() {
    String key = PaymentsServiceContract.key();
    String account = PaymentsServiceContract.account("kafka_replay");
    Answer first = pay(key, account, 700);
    String paymentId = first.json().path("id").asString();
    String eventId = awaitDelivered(paymentId);

    Answer replayed = pay(key, account, 700);
    List<ConsumerRecord<String, String>> records = readToTheEnd(succeededTopic);

    assertThat(first.status()).as(first.toString()).isEqualTo(201);
    assertThat(replayed.status()).isEqualTo(201);
    assertThat(replayed.header("Idempotency-Status")).isEqualTo("replayed");
    assertThat(service.count("SELECT COUNT(*) FROM idem_outbox WHERE destination = ? AND aggregate_id = ?",
        KafkaEvents.ROUTE, paymentId)).as("the replay wrote no second event").isEqualTo(1);
    assertRecord(single(records, paymentId), succeededTopic, "payment.succeeded", eventId);
  }

  // ---------------------------------------------------------------- helpers

  private Answer pay(String key, String account, long amount) {
    return service.post("/payments", tenant.apiKey(), key, PaymentsServiceContract.body(account, amount));
  }

  /** Waits until the Kafka event about {@code aggregateId} is delivered (acknowledged by the broker); its id. */
  private String awaitDelivered(String aggregateId) {
    return Eventually.await("the Kafka event about " + aggregateId + " delivered", DEADLINE,
        () -> service.text("SELECT id FROM idem_outbox WHERE destination = ? AND aggregate_id = ? AND status ="
            + " 'delivered'", KafkaEvents.ROUTE, aggregateId), id -> id != null).trim();
  }

  private void assertRecord(ConsumerRecord<String, String> r, String topic, String type, String eventId) {
    JsonNode envelope = envelope(r);
    assertThat(r.topic()).isEqualTo(topic);
    assertThat(header(r, KafkaTransport.EVENT_ID_HEADER)).isEqualTo(eventId);
    assertThat(envelope.path("id").asString()).isEqualTo(eventId);
    assertThat(header(r, KafkaTransport.EVENT_TYPE_HEADER)).isEqualTo(type);
    assertThat(envelope.path("type").asString()).isEqualTo(type);
    assertThat(header(r, KafkaEvents.TENANT_HEADER)).isEqualTo(tenant.tenant());
    assertThat(envelope.path("created").asString()).isNotEmpty();
    assertThat(envelope.path("data").path("id").asString()).isEqualTo(r.key());
  }

  private static JsonNode envelope(ConsumerRecord<String, String> r) {
    return JSON.readTree(r.value());
  }

  private static String header(ConsumerRecord<String, String> r, String name) {
    Header h = r.headers().lastHeader(name);
    return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
  }

  /** The one record keyed {@code key} (the payment or refund id), across the topics read. */
  private static ConsumerRecord<String, String> single(List<ConsumerRecord<String, String>> records, String key) {
    List<ConsumerRecord<String, String>> matching = records.stream().filter(r -> key.equals(r.key())).toList();
    assertThat(matching).as("records keyed " + key).hasSize(1);
    return matching.get(0);
  }

  /**
   * Every record of the topics, from the beginning to the end offsets as they are now, with a consumer of a group of
   * its own. Called once the events are delivered (acknowledged), so everything the relay sent is before the end.
   */
  private List<ConsumerRecord<String, String>> readToTheEnd(String... topics) {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put(ConsumerConfig.GROUP_ID_CONFIG, "payments-test-" + UUID.randomUUID());
    config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config)) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (String topic : topics) {
        for (PartitionInfo p : consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
          partitions.add(new TopicPartition(topic, p.partition()));
        }
      }
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
      List<ConsumerRecord<String, String>> records = new ArrayList<>();
      Eventually.await("every record of " + Set.of(topics) + " up to " + end, DEADLINE, () -> {
        consumer.poll(Duration.ofMillis(200)).forEach(records::add);
        return partitions.stream().allMatch(p -> consumer.position(p) >= end.get(p));
      }, done -> done);
      return records;
    }
  }
}
