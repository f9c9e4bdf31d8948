package dev.idem.bench.spring.listener;

import dev.idem.bench.outbox.ConsumerComparison.LastCommit;
import dev.idem.kafka.KafkaTransport;
import dev.idem.spring.listener.IdempotentListener;
import java.nio.charset.StandardCharsets;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The listeners under test, per broker two methods alike but for {@code @IdempotentListener}: {@code baseline}, a
 * {@code @Transactional} listener that applies the effect, and {@code idem}, the same method run through the inbox.
 * The RabbitMQ ones take the queue {@code ${bench.queue}} and the AMQP message-id; the Kafka ones each a topic of
 * their own, {@code ${bench.topic}-<variant>}, their container id as consumer group, and the {@code idem-event-id}
 * header. No container starts with the application: the benchmark starts and stops one around each measurement.
 */
public class BenchListeners {
  /** The consumer name of the RabbitMQ listener through the inbox. */
  static final String RABBIT_CONSUMER = "bench-rabbit";
  /** The consumer name of the Kafka listener through the inbox. */
  static final String KAFKA_CONSUMER = "bench-kafka";

  private final Effects effects;

  /** The listeners, each applying {@code effects}. */
  public BenchListeners(Effects effects) {
    this.effects = effects;
  }

  /** The listener container's id, and on Kafka its consumer group: {@code <broker>-<variant>}. */
  static String containerId(String broker, String variant) {
    return broker + "-" + variant;
  }

  /**
   * The effect of one message, the same in every listener: one {@code INSERT} of its id into the effect table, in
   * the listener's transaction (a {@link JdbcTemplate} on the application's data source); once that transaction
   * commits, the measurement under way hears of it.
   */
  public static final class Effects {
    private final JdbcTemplate jdbc;
    private final String insert;
    private volatile LastCommit measurement;

    Effects(DataSource dataSource, String insert) {
      this.jdbc = new JdbcTemplate(dataSource);
      this.insert = insert;
    }

    /** The measurement that hears of the commits from now on; null for none. */
    void measure(LastCommit measurement) {
      this.measurement = measurement;
    }

    void apply(String messageId) {
      jdbc.update(insert, messageId);
      LastCommit heard = measurement;
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
        @Override
        public void afterCommit() {
          if (heard != null) {
            heard.committed(1);
          }
        }
      });
    }
  }

  /** RabbitMQ, without the inbox. */
  @RabbitListener(id = "rabbit-baseline", queues = "${bench.queue:unused}", autoStartup = "false")
  @Transactional
  public void rabbitBaseline(Message message) {
    effects.apply(message.getMessageProperties().getMessageId());
  }

  /** Kafka, without the inbox. */
  @KafkaListener(id = "kafka-baseline", topics = "${bench.topic:unused}-baseline", autoStartup = "false")
  @Transactional
  public void kafkaBaseline(ConsumerRecord<String, String> record) {
    effects.apply(eventId(record));
  }

  /** The same RabbitMQ method through the inbox. */
  @RabbitListener(id = "rabbit-idem", queues = "${bench.queue:unused}", autoStartup = "false")
  @IdempotentListener(consumer = RABBIT_CONSUMER)
  @Transactional
  public void rabbitIdem(Message message) {
    effects.apply(message.getMessageProperties().getMessageId());
  }

  /** The same Kafka method through the inbox. */
  @KafkaListener(id = "kafka-idem", topics = "${bench.topic:unused}-idem", autoStartup = "false")
  @IdempotentListener(consumer = KAFKA_CONSUMER)
  @Transactional
  public void kafkaIdem(ConsumerRecord<String, String> record) {
    effects.apply(eventId(record));
  }

  private static String eventId(ConsumerRecord<String, String> record) {
    Header id = record.headers().lastHeader(KafkaTransport.EVENT_ID_HEADER);
    return id == null ? null : new String(id.value(), StandardCharsets.UTF_8);
  }
}
