package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.OutboxMessage;
import dev.idem.test.Eventually;
import dev.idem.test.kafka.KafkaBroker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.StreamSupport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.header.Header;
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
    return message(type, aggregateId, destination, Map.of("tenant", "t-1"));
  }

  private static OutboxMessage message(String type, String aggregateId, String destination,
      Map<String, String> headers) {
    UUID id = UUID.randomUUID();
    return new OutboxMessage(id, type, "order", aggregateId, "{\"order\":\"" + id + "\"}", headers, destination, 1,
        Instant.ofEpochMilli(1_700_000_000_000L));
  }

  private static Map<String, Object> config(Object... keysAndValues) {
    Map<String, Object> config = new LinkedHashMap<>();
    config.put("bootstrap.servers", "x:1");
    for (int i = 0; i < keysAndValues.length; i += 2) {
      config.put((String) keysAndValues[i], keysAndValues[i + 1]);
    }
    return config;
  }

  private static List<Header> headers(ConsumerRecord<String, byte[]> r, String name) {
    return StreamSupport.stream(r.headers().spliterator(), false).filter(h -> h.key().equalsIgnoreCase(name)).toList();
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
    // an aggregate's events in order need one partition per aggregate
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "x:1", "partitioner.class",
        "org.apache.kafka.clients.producer.RoundRobinPartitioner")).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitioner.class");
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "x:1", "partitioner.ignore.keys",
        "true")).build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("partitioner.ignore.keys");
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

  @Test
  void aBatchToAMissingTopicIsRetriedAsNotSentWithinAboutTheSendTimeout() {
    // regression: each send blocked up to max.block.ms (the send timeout) on the missing metadata, 20 x 2 s in all
    List<OutboxMessage> batch = IntStream.range(0, 20)
        .mapToObj(i -> message("order.placed", "a" + i, "kafka:" + f.topic + "-missing")).toList();
    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig())
        .sendTimeout(Duration.ofSeconds(2)).build()) {
      long start = System.nanoTime();

      List<DeliveryResult> results = transport.sendAll(batch);

      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(6));
      assertThat(results).hasSize(20).allMatch(r -> r.kind() == DeliveryResult.Kind.RETRY);
    }
  }

  @Test
  void aBatchToSeveralMissingTopicsIsRetriedWithinAboutTheSendTimeout() {
    List<OutboxMessage> batch = IntStream.range(0, 5)
        .mapToObj(i -> message("order.placed", "a", "kafka:" + f.topic + "-missing-" + i)).toList();
    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig())
        .sendTimeout(Duration.ofSeconds(2)).build()) {
      long start = System.nanoTime();

      List<DeliveryResult> results = transport.sendAll(batch);

      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(6));
      assertThat(results).allMatch(r -> r.kind() == DeliveryResult.Kind.RETRY);
    }
  }

  @Test
  void aMissingTopicDoesNotHoldBackTheOtherTopicsOfTheBatch() throws Exception {
    String missing = "kafka:" + f.topic + "-missing";
    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig())
        .sendTimeout(Duration.ofSeconds(2)).build()) {
      long start = System.nanoTime();

      List<DeliveryResult> results = transport.sendAll(List.of(message("order.placed", "a", missing),
          message("order.placed", "b", "kafka:" + f.topic), message("order.placed", "c", missing),
          message("order.placed", "d", "kafka:" + f.topic)));

      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(6));
      assertThat(results).extracting(DeliveryResult::kind).containsExactly(DeliveryResult.Kind.RETRY,
          DeliveryResult.Kind.DELIVERED, DeliveryResult.Kind.RETRY, DeliveryResult.Kind.DELIVERED);
    }
    assertThat(KafkaFixture.endOffsets(f.topic, 4)).isEqualTo(2);
  }

  @Test
  void lookupsOfManyMissingTopicsRunOnAtMostTheBoundOfThreadsAndAFailedOneFailsFastAfterwards() throws Exception {
    // regression: one lookup thread per topic of the batch (300 topics, 300 threads), started again on every retry
    String prefix = "idem-kafka-many-lookup-";
    List<OutboxMessage> batch = IntStream.range(0, 50)
        .mapToObj(i -> message("order.placed", "a" + i, "kafka:" + f.topic + "-missing-" + i)).toList();
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("max.block.ms", 500); // several rounds of lookups within one send timeout
    int largestLookupPool;
    try (KafkaTransport transport = KafkaTransport.builder(config).name("many").sendTimeout(Duration.ofSeconds(3))
        .build()) {
      long start = System.nanoTime();

      List<DeliveryResult> first = transport.sendAll(batch);

      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(7));
      assertThat(first).hasSize(50).allSatisfy(r -> {
        assertThat(r.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
        assertThat(r.error()).hasValueSatisfying(e -> assertThat(e).contains("metadata"));
      });
      List<OutboxMessage> cached = IntStream.range(0, 50)
          .filter(i -> first.get(i).error().orElseThrow().contains("unavailable")).mapToObj(batch::get).toList();
      assertThat(cached).hasSizeGreaterThanOrEqualTo(KafkaTransport.LOOKUP_THREADS);
      assertThat(first.stream().map(r -> r.error().orElseThrow()).filter(e -> e.contains("unavailable")))
          .allSatisfy(e -> assertThat(e).containsPattern("metadata for topic '" + f.topic + "-missing-\\d+'"
              + " unavailable: TimeoutException: .+, not retried before 20\\d\\d-"));

      start = System.nanoTime();
      List<DeliveryResult> again = transport.sendAll(cached);

      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1000));
      assertThat(again).hasSameSizeAs(cached).allSatisfy(r -> {
        assertThat(r.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
        assertThat(r.error()).hasValueSatisfying(e -> assertThat(e).contains("unavailable", "not retried before"));
      });
      largestLookupPool = transport.largestLookupPool();
    }
    assertThat(largestLookupPool).isPositive().isLessThanOrEqualTo(KafkaTransport.LOOKUP_THREADS);
    Eventually.await("the lookup threads ended by close()", Duration.ofSeconds(10),
        () -> Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith(prefix)).count(),
        live -> live == 0);
  }

  @Test
  void aTopicWhoseLookupFailedFailsFastUntilTheEntryExpiresThenIsLookedUpAgain() {
    String topic = f.topic + "-later";
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("max.block.ms", 500);
    try (KafkaTransport transport = KafkaTransport.builder(config).name("later").sendTimeout(Duration.ofSeconds(2))
        .build()) {
      DeliveryResult missing = transport.send(message("order.placed", "a", "kafka:" + topic));
      assertThat(missing.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
      assertThat(missing.error()).hasValueSatisfying(e -> assertThat(e)
          .contains("metadata for topic '" + topic + "' unavailable: ", "not retried before"));

      KafkaBroker.createTopic(topic, 1);
      long start = System.nanoTime();
      DeliveryResult cached = transport.send(message("order.placed", "b", "kafka:" + topic));

      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(1000));
      assertThat(cached.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
      assertThat(cached.error()).isEqualTo(missing.error());

      Eventually.await("a send to the topic, created meanwhile, once the entry expired", Duration.ofSeconds(30),
          () -> transport.send(message("order.placed", "c", "kafka:" + topic)), DeliveryResult::isDelivered);
    }
  }

  @Test
  void aBootstrapServerWithoutAPortIsRefusedAtBuild() {
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "localhost")).name("noport").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("noport")
        .hasMessageContaining("Invalid url in bootstrap.servers: localhost");
  }

  @Test
  void saslWithoutAJaasConfigurationIsRefusedAtBuildWithoutShowingSecrets() {
    assertThatThrownBy(() -> KafkaTransport.builder(config("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism",
        "PLAIN")).name("sasl").build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("sasl")
        .hasMessageContaining("Could not find a 'KafkaClient' entry in the JAAS configuration");
    String unterminated = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\""
        + " password=\"s3cr3t\"";
    assertThatThrownBy(() -> KafkaTransport.builder(config("security.protocol", "SASL_PLAINTEXT", "sasl.mechanism",
        "PLAIN", "sasl.jaas.config", unterminated)).name("sasl").build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("JAAS config entry not terminated by semi-colon").hasMessageNotContaining("s3cr3t");
  }

  @Test
  void aMissingInterceptorClassIsRefusedAtBuild() {
    assertThatThrownBy(() -> KafkaTransport.builder(config("interceptor.classes", "com.example.Missing"))
        .name("ic").build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ic")
        .hasMessageContaining("ClassNotFoundException: com.example.Missing");
  }

  @Test
  void aKeystoreThatCannotBeReadIsRefusedAtBuildWithoutShowingItsPassword() {
    assertThatThrownBy(() -> KafkaTransport.builder(config("security.protocol", "SSL", "ssl.keystore.location",
        "/nonexistent/idem/keystore.jks", "ssl.keystore.password", "s3cr3t-store", "ssl.key.password", "s3cr3t-key"))
        .name("ks").build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ks")
        .hasMessageContaining("Failed to load SSL keystore /nonexistent/idem/keystore.jks")
        .hasMessageContaining("NoSuchFileException").hasMessageNotContaining("s3cr3t");
  }

  @Test
  void aBootstrapServerThatDoesNotResolveIsNotRefusedAndTheSendsSayWhy() {
    try (KafkaTransport transport = KafkaTransport.builder(Map.of("bootstrap.servers", "no-such-host.invalid:9092"))
        .name("dns").sendTimeout(Duration.ofSeconds(1)).build()) {

      DeliveryResult result = transport.send(message("order.placed", "a", "kafka:" + f.topic));

      assertThat(result.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
      assertThat(result.error()).hasValueSatisfying(e -> assertThat(e).contains("transport dns cannot create its Kafka"
          + " producer", "ConfigException: No resolvable bootstrap urls given in bootstrap.servers"));
    }
    // the rest of the configuration is still checked
    assertThatThrownBy(() -> KafkaTransport.builder(Map.of("bootstrap.servers", "no-such-host.invalid:9092",
        "interceptor.classes", "com.example.Missing")).build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("com.example.Missing");
  }

  @Test
  void secretsAreHiddenInErrorTexts() {
    assertThat(KafkaTransport.hideSecrets("no s3cr3t here, nor p4ss", Map.of("ssl.key.password", "s3cr3t",
        "my.secret", new org.apache.kafka.common.config.types.Password("p4ss"), "linger.ms", "no")))
        .isEqualTo("no [hidden] here, nor [hidden]");
  }

  @Test
  void anEventHeaderCannotReplaceTheTransportsHeaders() {
    Map<String, String> forged = new LinkedHashMap<>();
    forged.put("idem-event-id", "forged");
    forged.put("IDEM-Event-Type", "forged");
    forged.put("idem-created-at", "0");
    forged.put("tenant", "t-1");
    OutboxMessage m = message("order.placed", "o-1", "kafka:" + f.topic, forged);

    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig()).build()) {
      assertThat(transport.send(m).isDelivered()).isTrue();
    }

    List<ConsumerRecord<String, byte[]>> records = KafkaFixture.readAll(f.topic, 1, Duration.ofSeconds(30));
    assertThat(records).hasSize(1);
    ConsumerRecord<String, byte[]> r = records.get(0);
    assertThat(headers(r, KafkaTransport.EVENT_ID_HEADER)).singleElement()
        .satisfies(h -> assertThat(new String(h.value(), StandardCharsets.UTF_8)).isEqualTo(m.id().toString()));
    assertThat(headers(r, KafkaTransport.EVENT_TYPE_HEADER)).singleElement()
        .satisfies(h -> assertThat(h.key()).isEqualTo(KafkaTransport.EVENT_TYPE_HEADER))
        .satisfies(h -> assertThat(new String(h.value(), StandardCharsets.UTF_8)).isEqualTo("order.placed"));
    assertThat(headers(r, KafkaTransport.CREATED_AT_HEADER)).hasSize(1);
    assertThat(KafkaFixture.header(r, KafkaTransport.CREATED_AT_HEADER)).isEqualTo("1700000000000");
    assertThat(KafkaFixture.header(r, "tenant")).isEqualTo("t-1");
  }

  @Test
  void retriesOfZeroAreRefusedAtBuild() {
    for (Object zero : List.of(0, "0")) {
      assertThatThrownBy(() -> KafkaTransport.builder(config("retries", zero)).name("r0").build())
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retries").hasMessageContaining("r0");
    }
  }

  @Test
  void aValueKafkaCannotReadIsRefusedAtBuildNamingTheSetting() {
    assertThatThrownBy(() -> KafkaTransport.builder(config("max.in.flight.requests.per.connection", "five"))
        .name("nan").build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("max.in.flight.requests.per.connection").hasMessageContaining("nan");
    assertThatThrownBy(() -> KafkaTransport.builder(config("linger.ms", "soon")).name("nan").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("linger.ms").hasMessageContaining("nan");
    assertThatThrownBy(() -> KafkaTransport.builder(config("compression.type", "zip")).name("nan").build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("compression.type");
  }

  @Test
  void aDeliveryTimeoutBelowLingerPlusRequestTimeoutIsRefusedAtBuild() {
    assertThatThrownBy(() -> KafkaTransport.builder(config("delivery.timeout.ms", 10_000, "request.timeout.ms", 30_000))
        .name("dt").build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("delivery.timeout.ms").hasMessageContaining("dt");
    assertThatThrownBy(() -> KafkaTransport.builder(config("delivery.timeout.ms", "50", "linger.ms", "100"))
        .name("dt").build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("delivery.timeout.ms");
  }

  @Test
  void aDeliveryTimeoutAloneGetsARequestTimeoutThatFitsIt() {
    try (KafkaTransport transport = KafkaTransport.builder(config("delivery.timeout.ms", "10000", "linger.ms", "0"))
        .build()) {
      assertThat(transport.producerConfig()).containsEntry("delivery.timeout.ms", "10000")
          .containsEntry("request.timeout.ms", 10_000);
    }
  }

  @Test
  void acksAndIdempotenceAreAcceptedInEveryFormKafkaAccepts() {
    for (Object acks : List.of(-1, "-1", "all", "ALL", (short) -1)) {
      for (Object idempotence : List.of(true, "true", " TRUE ")) {
        try (KafkaTransport transport = KafkaTransport.builder(config("acks", acks, "enable.idempotence", idempotence))
            .build()) {
          assertThat(transport.producerConfig()).containsEntry("acks", "all").containsEntry("enable.idempotence",
              "true");
        }
      }
    }
    assertThatThrownBy(() -> KafkaTransport.builder(config("acks", 1)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("acks");
    assertThatThrownBy(() -> KafkaTransport.builder(config("enable.idempotence", false)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("enable.idempotence");
    assertThatThrownBy(() -> KafkaTransport.builder(config("max.in.flight.requests.per.connection", 6)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max.in.flight.requests.per.connection");
  }

  @Test
  void theProducerConfigurationShowsNoSecret() {
    String jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\""
        + " password=\"s3cr3t\";";
    try (KafkaTransport transport = KafkaTransport.builder(config("sasl.jaas.config", jaas,
        "ssl.truststore.password", "s3cr3t", "ssl.keystore.key", "s3cr3t", "my.client.secret", "s3cr3t")).build()) {

      Map<String, Object> shown = transport.producerConfig();

      assertThat(shown).containsEntry("sasl.jaas.config", "[hidden]").containsEntry("ssl.truststore.password",
          "[hidden]").containsEntry("ssl.keystore.key", "[hidden]").containsEntry("my.client.secret", "[hidden]")
          .containsEntry("bootstrap.servers", "x:1");
      assertThat(shown.toString()).doesNotContain("s3cr3t");
      assertThat(transport.toString()).doesNotContain("s3cr3t");
    }
  }

  @Test
  void aSecretOfTheWrongTypeIsRefusedWithoutShowingIt() {
    assertThatThrownBy(() -> KafkaTransport.builder(config("ssl.key.password", 987_654_321)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ssl.key.password")
        .hasMessageNotContaining("987654321");
  }

  @Test
  void theRecordsAreWrittenByAnIdempotentProducer() throws Exception {
    // an idempotent producer numbers its records; the broker keeps the last number per producer and partition
    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig()).build()) {
      assertThat(transport.sendAll(List.of(message("order.placed", "same-key", "kafka:" + f.topic),
          message("order.placed", "same-key", "kafka:" + f.topic),
          message("order.placed", "same-key", "kafka:" + f.topic)))).allMatch(DeliveryResult::isDelivered);
    }

    List<ProducerState> producers = new ArrayList<>();
    try (Admin admin = KafkaBroker.admin()) {
      List<TopicPartition> partitions = IntStream.range(0, 4).mapToObj(p -> new TopicPartition(f.topic, p)).toList();
      admin.describeProducers(partitions).all().get(30, TimeUnit.SECONDS)
          .values().forEach(d -> producers.addAll(d.activeProducers()));
    }
    assertThat(producers).singleElement().satisfies(p -> {
      assertThat(p.producerId()).isNotNegative();
      assertThat(p.lastSequence()).isEqualTo(2);
    });
  }

  @Test
  void anErrorOfAProducerAlreadySetAsideLeavesTheCurrentOneOpen() {
    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig()).name("aside").build()) {
      assertThat(transport.send(message("order.placed", "a", "kafka:" + f.topic)).isDelivered()).isTrue();
      var first = transport.currentProducer();
      transport.failure(new OutOfOrderSequenceException("lost"), first);
      assertThat(transport.send(message("order.placed", "b", "kafka:" + f.topic)).isDelivered()).isTrue();
      var second = transport.currentProducer();

      DeliveryResult late = transport.failure(new KafkaException("Producer is closed forcefully."), first);

      assertThat(late.kind()).isEqualTo(DeliveryResult.Kind.RETRY);
      assertThat(second).isNotNull().isNotSameAs(first);
      assertThat(transport.currentProducer()).isSameAs(second);
      assertThat(transport.send(message("order.placed", "c", "kafka:" + f.topic)).isDelivered()).isTrue();
      assertThat(transport.producersOpened()).isEqualTo(2);
    }
  }

  @Test
  void settingTheProducerAsideWhileOtherThreadsSendReplacesItOnce() throws Exception {
    // regression: the old producer, closed at once, failed the records other threads had in flight, and their errors
    // closed the new producer too
    int discards = 5;
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger batches = new AtomicInteger();
    ExecutorService senders = Executors.newFixedThreadPool(4);
    try (KafkaTransport transport = KafkaTransport.builder(KafkaBroker.clientConfig()).name("churn").build()) {
      assertThat(transport.send(message("order.placed", "a", "kafka:" + f.topic)).isDelivered()).isTrue();
      List<Future<?>> running = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        running.add(senders.submit(() -> {
          while (!stop.get()) {
            transport.sendAll(IntStream.range(0, 20).mapToObj(i -> message("order.placed", "k" + i, "kafka:" + f.topic))
                .toList());
            batches.incrementAndGet();
          }
          return null;
        }));
      }

      for (int d = 0; d < discards; d++) {
        int seen = batches.get();
        Eventually.await("4 more batches, and a current producer", Duration.ofSeconds(30), batches::get,
            b -> b >= seen + 4 && transport.currentProducer() != null);
        transport.failure(new OutOfOrderSequenceException("lost"), transport.currentProducer());
      }
      int seen = batches.get();
      Eventually.await("8 more batches after the last replacement", Duration.ofSeconds(30), batches::get,
          b -> b >= seen + 8);
      stop.set(true);
      for (Future<?> r : running) {
        r.get(60, TimeUnit.SECONDS);
      }

      assertThat(transport.producersOpened()).isEqualTo(1 + discards);
    } finally {
      stop.set(true);
      senders.shutdownNow();
    }
  }
}
