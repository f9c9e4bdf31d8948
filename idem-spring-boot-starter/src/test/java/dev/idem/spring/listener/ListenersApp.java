package dev.idem.spring.listener;

import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.Reason;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.annotation.RabbitListener;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.annotation.TopicPartition;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The application of the listener tests: a {@code @KafkaListener} (when {@code listeners.kafka.topic} is set; one
 * assigned a partition when {@code listeners.kafka.partition-topic} is) and a
 * {@code @RabbitListener} (when {@code listeners.rabbit.queue} is), each an {@link IdempotentListener} of consumer
 * {@code payments}, that write one row per call into the table {@code listeners.effects} through Spring's
 * {@link JdbcTemplate} and then behave as the payload says ({@link Effects#apply}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class ListenersApp {
  /** What a child JVM prints once the transaction of message {@code listeners.crash-id} committed. */
  static final String COMMITTED = "COMMITTED";

  /** The effects of both listeners, and what each message did. */
  public static class Effects {
    /** Counted down after the commit of the first {@code stall} message, which then waits for {@link #release}. */
    static volatile CountDownLatch stalled = new CountDownLatch(1);
    static volatile CountDownLatch release = new CountDownLatch(1);

    private final JdbcTemplate jdbc;
    private final String table;
    final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    /** The threads that ran each message's method. */
    final Map<String, List<String>> threads = new ConcurrentHashMap<>();

    private final Ledger ledger;

    Effects(JdbcTemplate jdbc, String table, Ledger ledger) {
      this.jdbc = jdbc;
      this.table = table;
      this.ledger = ledger;
    }

    /**
     * Writes the message's row, then: {@code poison} throws every time; {@code flaky} throws on the first two calls;
     * {@code ack-lost} throws after the first call's commit (as a lost acknowledgement, so the message comes again);
     * {@code crash} prints {@link #COMMITTED} after the commit of message {@code listeners.crash-id} (a system
     * property) and waits to be killed; {@code stall} counts {@link #stalled} down after the first call's commit and
     * waits for {@link #release} (at most 60 s); {@code booked} writes its row through the {@code @Transactional}
     * {@link Ledger} instead, and throws on the first two calls.
     */
    void apply(String id, String payload) {
      int call = calls.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
      threads.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>()).add(Thread.currentThread().getName());
      if (payload.equals("booked")) {
        ledger.book(table, id);
        if (call <= 2) {
          throw new IllegalStateException("booked message " + id + " failed on call " + call);
        }
        return;
      }
      jdbc.update("INSERT INTO " + table + " (event_id) VALUES (?)", id);
      switch (payload) {
        case "poison" -> throw new IllegalStateException("poison message " + id);
        case "flaky" -> {
          if (call <= 2) {
            throw new IllegalStateException("flaky message " + id + " failed on call " + call);
          }
        }
        case "ack-lost" -> {
          if (call == 1) {
            afterCommit(() -> {
              throw new IllegalStateException("the acknowledgement of " + id + " was lost");
            });
          }
        }
        case "crash" -> {
          if (id.equals(System.getProperty("listeners.crash-id"))) {
            afterCommit(() -> {
              System.out.println(COMMITTED + " " + id);
              System.out.flush();
              awaitQuietly(new CountDownLatch(1), 10, TimeUnit.MINUTES); // killed here
            });
          }
        }
        case "stall" -> {
          if (call == 1) {
            afterCommit(() -> {
              stalled.countDown();
              awaitQuietly(release, 60, TimeUnit.SECONDS);
            });
          }
        }
        default -> { }
      }
    }

    int rows(String id) {
      return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE event_id = ?", Integer.class, id);
    }

    int rows() {
      return jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class);
    }

    int calls(String id) {
      AtomicInteger n = calls.get(id);
      return n == null ? 0 : n.get();
    }

    private static void afterCommit(Runnable hook) {
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
        @Override
        public void afterCommit() {
          hook.run();
        }
      });
    }

    private static void awaitQuietly(CountDownLatch latch, long time, TimeUnit unit) {
      try {
        latch.await(time, unit);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A service whose writes run in a Spring transaction of the default propagation. */
  public static class Ledger {
    private final JdbcTemplate jdbc;

    Ledger(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    /**
     * Writes one row for {@code id} into {@code table}, in the database's transaction by name: with Kafka
     * transactions on, the application has a second transaction manager, Kafka's.
     */
    @Transactional("transactionManager")
    public void book(String table, String id) {
      jdbc.update("INSERT INTO " + table + " (event_id) VALUES (?)", id);
    }
  }

  /** The Kafka listener: the id is the record's {@code idem-event-id} header. */
  public static class KafkaPayments {
    private final Effects effects;

    KafkaPayments(Effects effects) {
      this.effects = effects;
    }

    @KafkaListener(topics = "${listeners.kafka.topic}", groupId = "${listeners.kafka.group}",
        concurrency = "${listeners.kafka.concurrency:1}")
    @IdempotentListener(consumer = "payments")
    public void on(ConsumerRecord<String, String> record) {
      Header id = record.headers().lastHeader("idem-event-id");
      effects.apply(new String(id.value(), StandardCharsets.UTF_8), record.value());
    }
  }

  /** A Kafka listener assigned partition 0 of {@code listeners.kafka.partition-topic}, not subscribed to a topic. */
  public static class KafkaPartitionPayments {
    private final Effects effects;

    KafkaPartitionPayments(Effects effects) {
      this.effects = effects;
    }

    @KafkaListener(topicPartitions = @TopicPartition(topic = "${listeners.kafka.partition-topic}", partitions = "0"),
        groupId = "${listeners.kafka.partition-topic}")
    @IdempotentListener(consumer = "payments")
    public void on(ConsumerRecord<String, String> record) {
      Header id = record.headers().lastHeader("idem-event-id");
      effects.apply(new String(id.value(), StandardCharsets.UTF_8), record.value());
    }
  }

  /** The RabbitMQ listener: the id is the AMQP message id. */
  public static class RabbitPayments {
    private final Effects effects;

    RabbitPayments(Effects effects) {
      this.effects = effects;
    }

    @RabbitListener(queues = "${listeners.rabbit.queue}")
    @IdempotentListener(consumer = "payments")
    public void on(Message message) {
      effects.apply(message.getMessageProperties().getMessageId(),
          new String(message.getBody(), StandardCharsets.UTF_8));
    }
  }

  /** What the interceptor reported, per message id. */
  public static class Outcomes implements ConsumerListener {
    final List<String> processed = new CopyOnWriteArrayList<>();
    final List<String> duplicates = new CopyOnWriteArrayList<>();
    final List<String> deadLettered = new CopyOnWriteArrayList<>();
    final List<String> rejected = new CopyOnWriteArrayList<>();
    final List<String> deadLetterFailed = new CopyOnWriteArrayList<>();

    @Override
    public void processed(String consumer, String source, String messageId) {
      processed.add(messageId);
    }

    @Override
    public void duplicate(String consumer, String source, String messageId) {
      duplicates.add(messageId);
    }

    @Override
    public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
      deadLettered.add(messageId);
    }

    @Override
    public void rejected(String consumer, String source, String messageId, Reason reason, String detail) {
      rejected.add(reason.code());
    }

    @Override
    public void deadLetterFailed(String consumer, String source, String messageId, Throwable error) {
      deadLetterFailed.add(messageId);
    }
  }

  @Bean
  Ledger ledger(JdbcTemplate jdbc) {
    return new Ledger(jdbc);
  }

  @Bean
  Effects effects(JdbcTemplate jdbc, @Value("${listeners.effects}") String table, Ledger ledger) {
    return new Effects(jdbc, table, ledger);
  }

  @Bean
  Outcomes outcomes() {
    return new Outcomes();
  }

  @Bean
  @ConditionalOnProperty("listeners.kafka.topic")
  KafkaPayments kafkaPayments(Effects effects) {
    return new KafkaPayments(effects);
  }

  @Bean
  @ConditionalOnProperty("listeners.kafka.partition-topic")
  KafkaPartitionPayments kafkaPartitionPayments(Effects effects) {
    return new KafkaPartitionPayments(effects);
  }

  @Bean
  @ConditionalOnProperty("listeners.rabbit.queue")
  RabbitPayments rabbitPayments(Effects effects) {
    return new RabbitPayments(effects);
  }
}
