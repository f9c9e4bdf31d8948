package dev.idem.spring.messaging.inboxtx;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.spring.events.app.EventsApp.Recorder;
import dev.idem.spring.messaging.inboxtx.InboxTxApp.AfterCommitLog;
import dev.idem.spring.messaging.inboxtx.InboxTxApp.Heard;
import dev.idem.spring.outbox.OutboxRelayLifecycle;
import dev.idem.test.Eventually;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * An inbox consumer from {@code idem.consumers.*} on the local RabbitMQ, whose handler writes with
 * {@code JdbcTemplate} and publishes an {@code @Externalized} event with no transaction code of its own: the inbox
 * opens a Spring transaction per message, so the effect row, the inbox row and the outbox row commit together (or
 * none of them), {@code AFTER_COMMIT} listeners run once after that commit, and the relay is woken by it (its poll is
 * a minute away). Run on H2, PostgreSQL and MariaDB by the subclasses.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class InboxTxContract {
  private static final Duration DEADLINE = Duration.ofSeconds(30);

  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String queue = "inboxtx-q-" + suffix;
  private final String effects = "inboxtx_fx_" + suffix;
  private final String outboxTable = "inboxtx_ob_" + suffix;
  private final String inboxTable = "inboxtx_ib_" + suffix;
  private Connection rabbit;
  private Channel admin;
  private ConfigurableApplicationContext context;
  private JdbcTemplate jdbc;
  private Heard heard;
  private AfterCommitLog afterCommit;
  private Recorder recorder;

  /** The data source's properties ({@code --name=value}). */
  abstract List<String> databaseProperties();

  @BeforeAll
  void start() throws Exception {
    String rabbitUri = System.getProperty("idem.test.rabbitmq.uri", "amqp://guest:guest@127.0.0.1:5672");
    ConnectionFactory factory = new ConnectionFactory();
    factory.setUri(rabbitUri);
    factory.setConnectionTimeout(5_000);
    rabbit = factory.newConnection("inboxtx-test");
    admin = rabbit.createChannel();
    admin.queueDeclare(queue, true, false, false, null);
    List<String> args = new ArrayList<>(databaseProperties());
    args.addAll(List.of("--spring.main.web-application-type=none",
        "--spring.datasource.hikari.maximum-pool-size=5",
        "--idem.outbox.table=" + outboxTable, "--idem.outbox.inbox-table=" + inboxTable,
        "--idem.outbox.initialize-schema=true",
        "--idem.outbox.relay.poll-interval=1m",
        "--test.effects=" + effects,
        "--idem.consumers.rabbitmq.uri=" + rabbitUri,
        "--idem.consumers.inboxtx.handler=shipWithEvent",
        "--idem.consumers.inboxtx.rabbitmq.queue=" + queue,
        "--idem.consumers.inboxtx.rabbitmq.channels=2",
        "--idem.consumers.inboxtx.rabbitmq.prefetch=5",
        "--idem.consumers.inboxtx.rabbitmq.max-failures=2",
        "--idem.consumers.inboxtx.rabbitmq.failure-pause=10ms"));
    context = new SpringApplicationBuilder(InboxTxApp.class).run(args.toArray(String[]::new));
    jdbc = context.getBean(JdbcTemplate.class);
    jdbc.execute("CREATE TABLE " + effects + " (event_id VARCHAR(64) NOT NULL)");
    heard = context.getBean(Heard.class);
    afterCommit = context.getBean(AfterCommitLog.class);
    recorder = context.getBean(Recorder.class);
  }

  @AfterAll
  void stop() throws Exception {
    try {
      if (context != null) {
        context.getBean(OutboxRelayLifecycle.class).stop();
        for (String table : List.of(effects, outboxTable + "_attempt", outboxTable, inboxTable)) {
          jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
        context.close();
      }
    } finally {
      admin.queueDelete(queue);
      rabbit.close();
    }
  }

  private void publish(String messageId, String body) throws Exception {
    AMQP.BasicProperties props = new AMQP.BasicProperties.Builder().messageId(messageId).deliveryMode(2).build();
    admin.basicPublish("", queue, props, body.getBytes(StandardCharsets.UTF_8));
  }

  private int effectRows(String id) {
    return jdbc.queryForObject("SELECT COUNT(*) FROM " + effects + " WHERE event_id = ?", Integer.class, id);
  }

  private List<OutboxEntry> outboxRows(String id) {
    return context.getBean(Outbox.class).list(OutboxQuery.all().limit(500)).entries().stream()
        .filter(e -> e.payload().contains("\"" + id + "\"")).toList();
  }

  private List<OutboxMessage> sent(String id) {
    return recorder.sentTo("recording:shipments").stream().filter(m -> m.payload().contains("\"" + id + "\""))
        .toList();
  }

  @Test
  void eachMessageCommitsItsRowItsInboxRowAndItsEventTogetherThenRunsAfterCommitWorkOnce() throws Exception {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      ids.add("ok-" + UUID.randomUUID());
    }

    for (String id : ids) {
      publish(id, "order " + id);
      publish(id, "order " + id); // a redelivery: the same message id again
    }

    Eventually.await("every message processed", DEADLINE, () -> List.copyOf(heard.processed),
        p -> p.containsAll(ids));
    Eventually.await("every redelivery acknowledged as a duplicate", DEADLINE, () -> List.copyOf(heard.duplicates),
        d -> d.containsAll(ids));
    Eventually.await("every event relayed right after its commit", DEADLINE,
        () -> ids.stream().filter(id -> sent(id).isEmpty()).count(), missing -> missing == 0);
    Inbox inbox = context.getBean(Inbox.class);
    for (String id : ids) {
      assertThat(effectRows(id)).as("effect rows of %s", id).isEqualTo(1);
      assertThat(inbox.contains("inboxtx", id)).as("inbox row of %s", id).isTrue();
      assertThat(outboxRows(id)).as("outbox rows of %s", id).singleElement()
          .satisfies(e -> assertThat(e.type()).isEqualTo("shipment.booked"));
      assertThat(sent(id)).as("events sent for %s", id).hasSize(1);
      assertThat(afterCommit.runs.get(id)).as("after-commit runs for %s", id).isEqualTo(1);
      assertThat(afterCommit.seen.get(id)).as("what another connection read after the commit of %s", id)
          .isEqualTo("inbox=1 effect=1");
    }
    assertThat(Collections.frequency(heard.processed, ids.get(0))).isEqualTo(1);
  }

  @Test
  void aHandlerThatThrowsAfterWritingAndPublishingLeavesNoneOfItsRows() throws Exception {
    String poison = "poison-" + UUID.randomUUID();
    String after = "after-" + UUID.randomUUID();

    publish(poison, "poison");
    publish(after, "order after the poison");

    Eventually.await("the poison message dead-lettered", DEADLINE, () -> List.copyOf(heard.deadLettered),
        d -> d.contains(poison));
    Eventually.await("the next message's event relayed", DEADLINE, () -> sent(after), s -> s.size() == 1);
    assertThat(effectRows(poison)).isZero();
    assertThat(context.getBean(Inbox.class).contains("inboxtx", poison)).isFalse();
    assertThat(outboxRows(poison)).isEmpty();
    assertThat(sent(poison)).isEmpty();
    assertThat(afterCommit.runs).doesNotContainKey(poison);
    assertThat(heard.processed).doesNotContain(poison);
    assertThat(effectRows(after)).isEqualTo(1);
    assertThat(afterCommit.runs.get(after)).isEqualTo(1);
  }

  @Test
  void anAfterCommitListenerThatThrowsChangesNothingForTheCommittedMessage() throws Exception {
    String id = "boom-" + UUID.randomUUID();

    publish(id, "order " + id);

    Eventually.await("the message processed", DEADLINE, () -> List.copyOf(heard.processed), p -> p.contains(id));
    Eventually.await("its event relayed", DEADLINE, () -> sent(id), s -> s.size() == 1);
    assertThat(afterCommit.runs.get(id)).isEqualTo(1);
    assertThat(afterCommit.seen.get(id)).isEqualTo("inbox=1 effect=1");
    assertThat(heard.retried).doesNotContain(id);
    assertThat(heard.duplicates).doesNotContain(id);
    assertThat(effectRows(id)).isEqualTo(1);
    assertThat(admin.messageCount(queue)).isZero();
  }
}
