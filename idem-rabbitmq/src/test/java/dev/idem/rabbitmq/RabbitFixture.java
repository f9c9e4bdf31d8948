package dev.idem.rabbitmq;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxListener;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.Reason;
import dev.idem.test.TestPostgres;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One test's world, under names of its own: outbox, inbox and effect tables on PostgreSQL; a direct exchange, a queue
 * bound to it with routing key {@code events} whose rejected messages are dead-lettered to a second queue; a
 * dead-letter exchange of Idem's consumer, routing key {@code dead} to a third queue. Closing removes all of them.
 */
final class RabbitFixture implements AutoCloseable {
  final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  final String outboxTable = "rmq_ob_" + suffix;
  final String inboxTable = "rmq_ib_" + suffix;
  final String effects = "rmq_fx_" + suffix;
  final String exchange = "idem-test-x-" + suffix;
  final String queue = "idem-test-q-" + suffix;
  final String deadLetters = "idem-test-dlq-" + suffix;
  /** A direct exchange for {@code RabbitMqInboxConsumer.Builder#deadLetterExchange}: key {@code dead} to a queue. */
  final String idemDeadLetterExchange = "idem-test-dlx-" + suffix;
  final String idemDeadLetters = "idem-test-idem-dlq-" + suffix;
  final Connection rabbit;
  final Channel admin;
  private final List<String> extraTables = new ArrayList<>();
  private final List<String> extraQueues = new ArrayList<>();

  RabbitFixture() throws IOException {
    Outbox.builder(JdbcOutboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL)
        .table(outboxTable).createSchemaIfMissing(true).build()).build();
    Inbox.builder(JdbcInboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL).table(inboxTable)
        .createSchemaIfMissing(true).build()).build();
    TestPostgres.createEffectTable(effects);
    rabbit = Rabbit.connect();
    admin = rabbit.createChannel();
    admin.exchangeDeclare(exchange, BuiltinExchangeType.DIRECT, false, false, null);
    admin.queueDeclare(deadLetters, false, false, false, null);
    declareQueue();
    admin.exchangeDeclare(idemDeadLetterExchange, BuiltinExchangeType.DIRECT, false, false, null);
    admin.queueDeclare(idemDeadLetters, false, false, false, null);
    admin.queueBind(idemDeadLetters, idemDeadLetterExchange, "dead");
  }

  /** Declares the queue (again) and binds it to the exchange with routing key {@code events}. */
  void declareQueue() throws IOException {
    admin.queueDeclare(queue, true, false, false,
        Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", deadLetters));
    admin.queueBind(queue, exchange, "events");
  }

  Outbox outbox() {
    return Outbox.builder(JdbcOutboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL)
        .table(outboxTable).build()).build();
  }

  Inbox inbox(InboxListener listener) {
    return Inbox.builder(JdbcInboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL)
        .table(inboxTable).build()).listener(listener).build();
  }

  /** A handler that records one effect row per message, keyed by its message id. */
  InboxHandler recordEffect() {
    return (tx, event) -> {
      Delivery d = event.message(Delivery.class);
      TestPostgres.insertEffect(JdbcTransaction.connectionOf(tx), effects, d.getProperties().getMessageId());
      return "ok";
    };
  }

  /** A queue of this test's that close() deletes. */
  void deleteAfterwards(String queueName) {
    extraQueues.add(queueName);
  }

  /** A table of this test's that close() drops. */
  String table(String name, String definition) {
    String table = name + "_" + suffix;
    TestPostgres.execute("CREATE TABLE " + table + " " + definition);
    extraTables.add(0, table);
    return table;
  }

  OutboxMessage message(String destination) {
    UUID id = UUID.randomUUID();
    return new OutboxMessage(id, "order.placed", "order", "o-" + id, "{\"order\":\"" + id + "\"}",
        Map.of("tenant", "t-1"), destination, 1, Instant.now());
  }

  String toExchange() {
    return "rabbitmq:" + exchange + "/events";
  }

  long effectCount() {
    return TestPostgres.effectCount(effects);
  }

  long effectCount(String eventId) {
    return TestPostgres.effectCount(effects, eventId);
  }

  /** Event ids that have more than one effect. */
  long eventsWithSeveralEffects() {
    return TestPostgres.eventsWithSeveralEffects(effects);
  }

  List<String> effectIds() {
    return TestPostgres.effectIds(effects);
  }

  long ready(String queueName) {
    try {
      return admin.messageCount(queueName);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws IOException, TimeoutException {
    try {
      for (String q : extraQueues) {
        admin.queueDelete(q);
      }
      admin.queueDelete(queue);
      admin.queueDelete(deadLetters);
      admin.exchangeDelete(exchange);
      admin.queueDelete(idemDeadLetters);
      admin.exchangeDelete(idemDeadLetterExchange);
      rabbit.close();
    } finally {
      List<String> tables = new ArrayList<>(extraTables);
      tables.addAll(List.of(effects, outboxTable + "_attempt", outboxTable, inboxTable));
      TestPostgres.drop(tables.toArray(String[]::new));
    }
  }

  /** Counts what an inbox and a consumer report. */
  static final class Counts implements InboxListener, ConsumerListener {
    final AtomicInteger processed = new AtomicInteger();
    final AtomicInteger duplicates = new AtomicInteger();
    final AtomicInteger mismatches = new AtomicInteger();
    final AtomicInteger acknowledged = new AtomicInteger();
    final AtomicInteger acknowledgedDuplicates = new AtomicInteger();
    final AtomicInteger failed = new AtomicInteger();
    final AtomicInteger paused = new AtomicInteger();
    final AtomicInteger rejected = new AtomicInteger();
    final AtomicInteger consumerMismatches = new AtomicInteger();
    final AtomicInteger gaveUp = new AtomicInteger();
    final AtomicInteger gaveUpFailures = new AtomicInteger();
    final AtomicInteger deadLetterFailed = new AtomicInteger();
    final List<Throwable> receiveFailures = new CopyOnWriteArrayList<>();
    /** The decisions of {@link #retried}, in order. */
    final List<Decision> retries = new CopyOnWriteArrayList<>();
    final List<Throwable> stopped = new CopyOnWriteArrayList<>();

    @Override
    public void processed(String consumer) {
      processed.incrementAndGet();
    }

    @Override
    public void duplicate(String consumer) {
      duplicates.incrementAndGet();
    }

    @Override
    public void payloadMismatch(String consumer, String eventId) {
      mismatches.incrementAndGet();
    }

    @Override
    public void processed(String consumer, String queue, String messageId) {
      acknowledged.incrementAndGet();
    }

    @Override
    public void duplicate(String consumer, String queue, String messageId) {
      acknowledged.incrementAndGet();
      acknowledgedDuplicates.incrementAndGet();
    }

    @Override
    public void retried(String consumer, String queue, String messageId, Decision decision, Throwable error) {
      failed.incrementAndGet();
      retries.add(decision);
    }

    @Override
    public void paused(String consumer, String queue, String messageId, Decision decision, Throwable error) {
      paused.incrementAndGet();
    }

    @Override
    public void deadLettered(String consumer, String queue, String messageId, Decision decision, Throwable error) {
      if (decision.reason() == Reason.PAYLOAD_MISMATCH) {
        consumerMismatches.incrementAndGet();
      } else {
        gaveUp.incrementAndGet();
        gaveUpFailures.set(decision.attempts());
      }
    }

    @Override
    public void rejected(String consumer, String queue, String messageId, Reason reason, String detail) {
      rejected.incrementAndGet();
    }

    @Override
    public void deadLetterFailed(String consumer, String queue, String messageId, Throwable error) {
      deadLetterFailed.incrementAndGet();
    }

    @Override
    public void receiveFailed(String consumer, String queue, Throwable error) {
      receiveFailures.add(error);
    }

    @Override
    public void stopped(String consumer, Throwable error) {
      stopped.add(error);
    }
  }
}
