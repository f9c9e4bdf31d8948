package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import dev.idem.test.kafka.KafkaBroker;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.support.serializer.DeserializationException;
import org.springframework.kafka.support.serializer.ErrorHandlingDeserializer;
import org.springframework.messaging.Message;

/**
 * A record an {@link IdempotentListener} cannot even be called with (its payload does not convert to the method's
 * type), or whose value could not be deserialized, goes to the dead-letter topic with the starter's error handler,
 * instead of being logged and skipped; the records after it take effect. One whose dead letter cannot be written is
 * skipped, and stops nothing.
 */
class PostgresKafkaUnconvertibleRecordTest {
  private static final Duration DEADLINE = Duration.ofSeconds(60);

  private final String topic = "amounts-" + UUID.randomUUID().toString().substring(0, 8);
  private final String tables = "unconv_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  private ConfigurableApplicationContext context;

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class AmountsApp {
    @Bean
    Amounts amounts() {
      return new Amounts();
    }
  }

  /** Takes amounts as numbers: a payload that is not one cannot be converted before the method runs. */
  public static class Amounts {
    private final List<String> seen = new CopyOnWriteArrayList<>();

    /** What the method was called with (a method: the bean is a proxy). */
    public List<String> seen() {
      return List.copyOf(seen);
    }

    @KafkaListener(topics = "${amounts.topic}", groupId = "${amounts.topic}")
    @IdempotentListener(consumer = "amounts")
    public void on(Message<Long> message) {
      byte[] id = message.getHeaders().get(KafkaRecords.EVENT_ID_HEADER, byte[].class);
      seen.add(new String(id, StandardCharsets.UTF_8) + "=" + message.getPayload());
    }
  }

  @AfterEach
  void tearDown() throws Exception {
    if (context != null) {
      context.close();
    }
    KafkaListenersContract.deleteTopics(topic);
    PostgresKafkaListenersTest.dropTables(tables);
  }

  @Test
  void aRecordThatCannotBeConvertedIsDeadLetteredAndTheNextOnesTakeEffect() throws Exception {
    Amounts amounts = start();

    try (KafkaProducer<String, String> producer = KafkaListenersContract.producer()) {
      producer.send(KafkaListenersContract.record(topic, "a-1", "100"));
      producer.send(KafkaListenersContract.record(topic, "a-2", "one hundred"));
      producer.send(KafkaListenersContract.record(topic, "a-3", "300"));
      producer.flush();
    }

    ConsumerRecord<String, String> dead = Eventually.await("a record on " + topic + ".dlt", DEADLINE,
        this::firstDeadLetter, found -> found != null);
    awaitAllConsumed(amounts);

    assertThat(amounts.seen()).containsExactlyInAnyOrder("a-1=100", "a-3=300");
    assertThat(dead.value()).isEqualTo("one hundred");
    assertThat(new String(dead.headers().lastHeader(KafkaRecords.EVENT_ID_HEADER).value(), StandardCharsets.UTF_8))
        .isEqualTo("a-2");
    assertThat(dead.headers().lastHeader("kafka_dlt-exception-fqcn")).isNotNull();
    assertThat(dead.headers().lastHeader("idem-dlt-reason")).as("Idem never saw it").isNull();
  }

  /**
   * A value that failed deserialization ({@code ErrorHandlingDeserializer}) is dead-lettered as its raw bytes, which
   * Spring Boot's default template (a {@code StringSerializer}) cannot write: the starter's own producer for such
   * records writes them, and the records after it take effect.
   */
  @Test
  void aRecordThatFailedDeserializationIsDeadLetteredAsItsRawBytes() throws Exception {
    assertAnUnreadableValueIsDeadLetteredAsItsRawBytes(longValues());
  }

  /**
   * The same in a container with a Kafka transaction manager: its after-rollback processor dead-letters the raw
   * bytes outside the transaction (the application's template is transactional, the raw one is not).
   */
  @Test
  void aRecordThatFailedDeserializationInATransactionalContainerIsDeadLetteredAsItsRawBytes() throws Exception {
    List<String> properties = new ArrayList<>(List.of(longValues()));
    properties.add("spring.kafka.producer.transaction-id-prefix=unconv-" + tables + "-");
    properties.add("spring.kafka.consumer.isolation-level=read_committed");
    assertAnUnreadableValueIsDeadLetteredAsItsRawBytes(properties.toArray(String[]::new));
  }

  /** A key that failed deserialization is dead-lettered as its raw bytes too, with the record's value as it came. */
  @Test
  void aRecordWhoseKeyFailedDeserializationIsDeadLetteredWithItsRawKey() throws Exception {
    Amounts amounts = start("spring.kafka.consumer.key-deserializer=" + ErrorHandlingDeserializer.class.getName(),
        "spring.kafka.consumer.properties.spring.deserializer.key.delegate.class="
            + LongDeserializer.class.getName());

    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("key.serializer", ByteArraySerializer.class.getName());
    config.put("value.serializer", StringSerializer.class.getName());
    try (KafkaProducer<byte[], String> producer = new KafkaProducer<>(config)) {
      producer.send(keyed("a-1", ByteBuffer.allocate(8).putLong(1).array(), "100"));
      producer.send(keyed("a-2", "not a number".getBytes(StandardCharsets.UTF_8), "200"));
      producer.send(keyed("a-3", ByteBuffer.allocate(8).putLong(3).array(), "300"));
      producer.flush();
    }

    ConsumerRecord<String, String> dead = Eventually.await("a record on " + topic + ".dlt", DEADLINE,
        this::firstDeadLetter, found -> found != null);
    awaitAllConsumed(amounts);

    assertThat(amounts.seen()).containsExactlyInAnyOrder("a-1=100", "a-3=300");
    assertThat(dead.key()).as("the key's bytes as they came").isEqualTo("not a number");
    assertThat(dead.value()).isEqualTo("200");
    assertThat(new String(dead.headers().lastHeader("kafka_dlt-key-exception-fqcn").value(), StandardCharsets.UTF_8))
        .isEqualTo(DeserializationException.class.getName());
  }

  /**
   * A record whose dead letter cannot be written (here its dead-letter topic, there at the start's check, was deleted
   * since) is skipped, as Spring's own handler does, rather than delivered again for good, which would stop the
   * partition.
   */
  @Test
  void aRecordWhoseDeadLetterCannotBeWrittenIsSkippedAndDoesNotStopThePartition() throws Exception {
    KafkaBroker.createTopic(topic + ".missing", 1);
    Amounts amounts = start("idem.listeners.kafka.dead-letter-suffix=.missing",
        "spring.kafka.producer.properties.max.block.ms=1000");
    try (Admin admin = KafkaBroker.admin()) {
      admin.deleteTopics(List.of(topic + ".missing")).all().get(30, TimeUnit.SECONDS);
    }

    try (KafkaProducer<String, String> producer = KafkaListenersContract.producer()) {
      producer.send(KafkaListenersContract.record(topic, "a-1", "100"));
      producer.send(KafkaListenersContract.record(topic, "a-2", "one hundred"));
      producer.send(KafkaListenersContract.record(topic, "a-3", "300"));
      producer.flush();
    }

    awaitAllConsumed(amounts);

    assertThat(amounts.seen()).containsExactlyInAnyOrder("a-1=100", "a-3=300");
    try (Admin admin = KafkaBroker.admin()) {
      assertThat(admin.listTopics().names().get(60, TimeUnit.SECONDS)).as("the dead-letter topic")
          .doesNotContain(topic + ".missing");
    }
  }

  private static String[] longValues() {
    return new String[] {"spring.kafka.consumer.value-deserializer=" + ErrorHandlingDeserializer.class.getName(),
        "spring.kafka.consumer.properties.spring.deserializer.value.delegate.class="
            + LongDeserializer.class.getName()};
  }

  private void sendLongsAndAnUnreadableValue() {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("key.serializer", StringSerializer.class.getName());
    config.put("value.serializer", ByteArraySerializer.class.getName());
    try (KafkaProducer<String, byte[]> producer = new KafkaProducer<>(config)) {
      producer.send(raw("a-1", ByteBuffer.allocate(8).putLong(100).array()));
      producer.send(raw("a-2", "abc".getBytes(StandardCharsets.UTF_8)));
      producer.send(raw("a-3", ByteBuffer.allocate(8).putLong(300).array()));
      producer.flush();
    }
  }

  /** Starts with {@code properties}, sends two numbers around a value that is not one, and checks its dead letter. */
  private void assertAnUnreadableValueIsDeadLetteredAsItsRawBytes(String... properties) throws Exception {
    Amounts amounts = start(properties);
    sendLongsAndAnUnreadableValue();

    ConsumerRecord<String, String> dead = Eventually.await("a record on " + topic + ".dlt", DEADLINE,
        this::firstDeadLetter, found -> found != null);
    awaitAllConsumed(amounts);

    assertThat(amounts.seen()).containsExactlyInAnyOrder("a-1=100", "a-3=300");
    assertThat(dead.key()).isEqualTo("a-2");
    assertThat(dead.value()).as("the bytes as they came").isEqualTo("abc");
    assertThat(new String(dead.headers().lastHeader("kafka_dlt-exception-fqcn").value(), StandardCharsets.UTF_8))
        .isEqualTo(DeserializationException.class.getName());
    assertThat(new String(dead.headers().lastHeader(KafkaRecords.EVENT_ID_HEADER).value(), StandardCharsets.UTF_8))
        .isEqualTo("a-2");
  }

  private ProducerRecord<String, byte[]> raw(String id, byte[] value) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(KafkaRecords.EVENT_ID_HEADER, id.getBytes(StandardCharsets.UTF_8));
    return new ProducerRecord<>(topic, null, id, value, headers);
  }

  private ProducerRecord<byte[], String> keyed(String id, byte[] key, String value) {
    RecordHeaders headers = new RecordHeaders();
    headers.add(KafkaRecords.EVENT_ID_HEADER, id.getBytes(StandardCharsets.UTF_8));
    return new ProducerRecord<>(topic, null, key, value, headers);
  }

  private Amounts start(String... properties) {
    KafkaListenersContract.createTopics(topic);
    List<String> args = new ArrayList<>(List.of("--spring.main.web-application-type=none",
        "--spring.kafka.bootstrap-servers=" + KafkaBroker.bootstrapServers(),
        "--spring.kafka.consumer.auto-offset-reset=earliest", "--amounts.topic=" + topic,
        "--idem.outbox.initialize-schema=true", "--idem.outbox.table=" + tables + "_ob",
        "--idem.outbox.inbox-table=" + tables + "_ib", "--idem.outbox.purge.enabled=false"));
    PostgresKafkaListenersTest.postgres().forEach(p -> args.add("--" + p));
    for (String p : properties) {
      args.add("--" + p);
    }
    context = new SpringApplicationBuilder(AmountsApp.class).run(args.toArray(String[]::new));
    return context.getBean(Amounts.class);
  }

  private void awaitAllConsumed(Amounts amounts) {
    Eventually.await("the records after it", DEADLINE, amounts::seen, seen -> seen.size() >= 2);
    Eventually.await("the group's offsets committed to the end of " + topic, DEADLINE,
        () -> KafkaListenersContract.committed(topic, topic), c -> c == KafkaListenersContract.endOffsets(topic));
  }

  private ConsumerRecord<String, String> firstDeadLetter() {
    Map<String, Object> config = new HashMap<>(KafkaBroker.clientConfig());
    config.put("key.deserializer", StringDeserializer.class.getName());
    config.put("value.deserializer", StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> reader = new KafkaConsumer<>(config)) {
      TopicPartition partition = new TopicPartition(topic + ".dlt", 0);
      reader.assign(List.of(partition));
      reader.seekToBeginning(List.of(partition));
      for (ConsumerRecord<String, String> r : reader.poll(Duration.ofMillis(500))) {
        return r;
      }
      return null;
    }
  }
}
