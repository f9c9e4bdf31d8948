package dev.idem.nats;

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
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Message;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One test's world, under names of its own: outbox, inbox and effect tables on PostgreSQL; a JetStream stream (in
 * memory, two-minute duplicate window unless given) capturing {@code idem.test.<suffix>.>}. Closing removes all of
 * them.
 */
final class NatsFixture implements AutoCloseable {
  final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  final String outboxTable = "nats_ob_" + suffix;
  final String inboxTable = "nats_ib_" + suffix;
  final String effects = "nats_fx_" + suffix;
  final String stream = "IDEM_TEST_" + suffix;
  final String subject = "idem.test." + suffix + ".events";
  final Connection nats;
  final JetStream js;
  final JetStreamManagement jsm;
  private final List<String> extraTables = new ArrayList<>();

  NatsFixture() throws IOException, JetStreamApiException {
    this(Duration.ofMinutes(2));
  }

  /** With another duplicate window: JetStream drops a second publish of a {@code Nats-Msg-Id} within it. */
  NatsFixture(Duration duplicateWindow) throws IOException, JetStreamApiException {
    Outbox.builder(JdbcOutboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL)
        .table(outboxTable).createSchemaIfMissing(true).build()).build();
    Inbox.builder(JdbcInboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL).table(inboxTable)
        .createSchemaIfMissing(true).build()).build();
    TestPostgres.createEffectTable(effects);
    nats = NatsServer.connect();
    jsm = nats.jetStreamManagement();
    js = nats.jetStream();
    jsm.addStream(StreamConfiguration.builder().name(stream).subjects("idem.test." + suffix + ".>")
        .storageType(StorageType.Memory).duplicateWindow(duplicateWindow).build());
  }

  Outbox outbox() {
    return Outbox.builder(JdbcOutboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL)
        .table(outboxTable).build()).build();
  }

  Inbox inbox(InboxListener listener) {
    return Inbox.builder(JdbcInboxStore.builder(TestPostgres.postgres()).dialect(JdbcDialect.POSTGRESQL)
        .table(inboxTable).build()).listener(listener).build();
  }

  /** A handler that records one effect row per message, keyed by its Nats-Msg-Id. */
  InboxHandler recordEffect() {
    return (tx, event) -> {
      Message m = event.message(Message.class);
      TestPostgres.insertEffect(JdbcTransaction.connectionOf(tx), effects,
          m.getHeaders().getFirst(NatsInboxConsumer.MESSAGE_ID));
      return "ok";
    };
  }

  /** A table of this test's that close() drops. */
  String table(String name, String definition) {
    String table = name + "_" + suffix;
    TestPostgres.execute("CREATE TABLE " + table + " " + definition);
    extraTables.add(0, table);
    return table;
  }

  OutboxMessage message() {
    UUID id = UUID.randomUUID();
    return new OutboxMessage(id, "order.placed", "order", "o-" + id, "{\"order\":\"" + id + "\"}",
        Map.of("tenant", "t-1"), "nats:" + subject, 1, Instant.now());
  }

  long storedMessages() {
    try {
      return jsm.getStreamInfo(stream).getStreamState().getMsgCount();
    } catch (IOException | JetStreamApiException e) {
      throw new IllegalStateException(e);
    }
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

  @Override
  public void close() throws Exception {
    try {
      jsm.deleteStream(stream);
      nats.close();
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
    final AtomicLong gaveUpDeliveries = new AtomicLong();
    final AtomicInteger deadLetterFailed = new AtomicInteger();

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
    public void processed(String consumer, String subject, String messageId) {
      acknowledged.incrementAndGet();
    }

    @Override
    public void duplicate(String consumer, String subject, String messageId) {
      acknowledged.incrementAndGet();
      acknowledgedDuplicates.incrementAndGet();
    }

    @Override
    public void retried(String consumer, String subject, String messageId, Decision decision, Throwable error) {
      failed.incrementAndGet();
    }

    @Override
    public void paused(String consumer, String subject, String messageId, Decision decision, Throwable error) {
      paused.incrementAndGet();
    }

    @Override
    public void deadLettered(String consumer, String subject, String messageId, Decision decision, Throwable error) {
      if (decision.reason() == Reason.PAYLOAD_MISMATCH) {
        consumerMismatches.incrementAndGet();
      } else {
        gaveUp.incrementAndGet();
        gaveUpDeliveries.set(decision.attempts());
      }
    }

    @Override
    public void rejected(String consumer, String subject, String messageId, Reason reason, String detail) {
      rejected.incrementAndGet();
    }

    @Override
    public void deadLetterFailed(String consumer, String subject, String messageId, Throwable error) {
      deadLetterFailed.incrementAndGet();
    }
  }
}
