package dev.idem.kafka;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.test.outbox.InboxConsumerContract;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The inbox consumer kit on the in-JVM Kafka broker: a topic (one partition), its dead-letter topic and a consumer
 * group of each test's own.
 */
class KafkaInboxConsumerContractTest extends InboxConsumerContract<ConsumerRecord<String, byte[]>> {
  private KafkaFixture f;
  private KafkaProducer<String, byte[]> producer;

  @BeforeEach
  void setUpKafka() {
    f = new KafkaFixture(1);
    producer = f.producer();
  }

  @AfterEach
  void tearDownKafka() throws Exception {
    if (producer != null) {
      producer.close(Duration.ofSeconds(5));
    }
    if (f != null) {
      f.close();
    }
  }

  @Override
  protected InboxStore createInboxStore(DataSource dataSource, String table) {
    return JdbcInboxStore.builder(dataSource).dialect(JdbcDialect.POSTGRESQL).table(table)
        .createSchemaIfMissing(true).build();
  }

  @Override
  protected void publish(String eventId, byte[] payload) throws Exception {
    RecordHeaders headers = new RecordHeaders();
    headers.add(KafkaTransport.EVENT_ID_HEADER, eventId.getBytes(StandardCharsets.UTF_8));
    send(new ProducerRecord<>(f.topic, null, "agg-1", payload, headers));
  }

  @Override
  protected void publishWithoutId(byte[] payload) throws Exception {
    send(new ProducerRecord<>(f.topic, null, "agg-1", payload, new RecordHeaders()));
  }

  private void send(ProducerRecord<String, byte[]> record) throws Exception {
    producer.send(record).get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  @Override
  protected AutoCloseable startConsumer(ConsumerSettings settings) {
    return KafkaInboxConsumer.builder(f.consumerConfig(), settings.inbox(), List.of(f.topic))
        .name(settings.consumer()).handler(settings.handler()).listener(settings.listener())
        .maxAttempts(settings.maxAttempts()).failurePause(Duration.ofMillis(20)).pollTimeout(Duration.ofMillis(100))
        .build().start();
  }

  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  protected Class<ConsumerRecord<String, byte[]>> messageType() {
    return (Class) ConsumerRecord.class;
  }

  @Override
  protected String eventIdIn(ConsumerRecord<String, byte[]> message) {
    return KafkaFixture.header(message, KafkaTransport.EVENT_ID_HEADER);
  }

  @Override
  protected long unsettled() throws Exception {
    return f.endOffsets() - f.committedOffsets();
  }

  @Override
  protected List<String> deadLetterIds(int atLeast) {
    List<String> ids = new ArrayList<>();
    for (ConsumerRecord<String, byte[]> r : KafkaFixture.readAll(f.deadLetterTopic, atLeast, WAIT)) {
      ids.add(KafkaFixture.header(r, KafkaTransport.EVENT_ID_HEADER));
    }
    return ids;
  }
}
