package dev.idem.spring.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxPayloadMismatchException;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxStatus;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookSigner;
import dev.idem.test.Eventually;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The outbox starter in a running Spring Boot application on H2: events enqueued in Spring transactions are sent by
 * the auto-configured relay, meters reach the registry, and a webhook receiver registered from properties dedupes
 * through the auto-configured inbox.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OutboxStarterTest {
  private static final Duration DEADLINE = Duration.ofSeconds(20);
  private final WebhookSecret current = WebhookSecret.generate();
  private final WebhookSecret previous = WebhookSecret.generate();

  private ConfigurableApplicationContext context;
  private Outbox outbox;
  private MeterRegistry meters;
  private RecordingTransport transport;
  private TransactionTemplate transactions;
  private DataSource dataSource;
  private HttpClient http;
  private int port;

  @BeforeAll
  void start() {
    context = new SpringApplicationBuilder(OutboxApp.class).run("--server.port=0", "--server.address=127.0.0.1",
        "--spring.datasource.url=jdbc:h2:mem:outbox-starter-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.outbox.initialize-schema=true",
        "--idem.outbox.relay.name=starter-relay",
        "--idem.outbox.relay.poll-interval=20ms",
        "--idem.outbox.metrics.stats-refresh=200ms",
        "--idem.outbox.webhooks.receivers.provider.path=/webhooks/provider",
        "--idem.outbox.webhooks.receivers.provider.secrets=" + current.reveal() + "," + previous.reveal(),
        "--idem.outbox.webhooks.receivers.ledger.path=/webhooks/ledger",
        "--idem.outbox.webhooks.receivers.ledger.secrets=" + current.reveal());
    outbox = context.getBean(Outbox.class);
    meters = context.getBean(MeterRegistry.class);
    transport = context.getBean(RecordingTransport.class);
    dataSource = context.getBean(DataSource.class);
    transactions = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
    port = ((WebServerApplicationContext) context).getWebServer().getPort();
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  }

  @AfterAll
  void stop() {
    context.close();
  }

  private UUID enqueueInTransaction(String destination, boolean rollBack) {
    OutboxEvent event = OutboxEvent.builder("order.placed").aggregate("order", "ord_" + UUID.randomUUID())
        .payload("{\"total\":1250}").destination(destination).build();
    transactions.executeWithoutResult(status -> {
      outbox.enqueue(JdbcTransaction.of(DataSourceUtils.getConnection(dataSource)), event);
      if (rollBack) {
        status.setRollbackOnly();
      }
    });
    return event.id();
  }

  private OutboxStatus status(UUID id) {
    return outbox.find(id).map(OutboxEntry::status).orElse(null);
  }

  private double counter(String name, String... tags) {
    Counter c = meters.find(name).tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void eventEnqueuedInACommittedTransactionIsDeliveredByTheAutoConfiguredRelay() {
    UUID rolledBack = enqueueInTransaction("recording:orders", true);
    UUID committed = enqueueInTransaction("recording:orders", false);

    Eventually.await("the committed event is delivered", DEADLINE, () -> status(committed),
        s -> s == OutboxStatus.DELIVERED);

    assertThat(transport.count(committed)).isEqualTo(1);
    assertThat(outbox.find(rolledBack)).as("an event rolled back with its transaction never existed").isEmpty();
    assertThat(transport.count(rolledBack)).isZero();
    OutboxRelayLifecycle relay = context.getBean(OutboxRelayLifecycle.class);
    assertThat(relay.isRunning()).isTrue();
    assertThat(relay.relay()).hasValueSatisfying(r -> assertThat(r.name()).isEqualTo("starter-relay"));
  }

  @Test
  void deliveriesFailuresAndBacklogReachTheMeterRegistryWithoutEventIds() {
    double deliveredBefore = counter("idem.outbox.delivered", "route", "recording", "relay", "starter-relay");
    String detail = "we_" + UUID.randomUUID().toString().substring(0, 8);
    UUID delivered = enqueueInTransaction("recording:" + detail, false);
    UUID refused = enqueueInTransaction("refusing:" + detail, false);

    Eventually.await("one event delivered, the other dead", DEADLINE,
        () -> status(delivered) + "/" + status(refused), s -> s.equals("DELIVERED/DEAD"));
    Eventually.await("the delivery is counted", DEADLINE,
        () -> counter("idem.outbox.delivered", "route", "recording", "relay", "starter-relay"),
        n -> n >= deliveredBefore + 1);
    Eventually.await("the dead event is counted", DEADLINE,
        () -> counter("idem.outbox.failed", "route", "refusing", "dead", "true", "kind", "permanent"), n -> n >= 1);

    Timer latency = meters.find("idem.outbox.delivery.latency").tags("route", "recording").timer();
    assertThat(latency).isNotNull();
    assertThat(latency.count()).isPositive();
    Gauge backlog = meters.find("idem.outbox.backlog").gauge();
    assertThat(backlog).isNotNull();
    // read in the background: the first scrape may come before the first read
    double pending = Eventually.await("the backlog gauge has a value", DEADLINE, backlog::value, v -> !v.isNaN());
    assertThat(pending).isGreaterThanOrEqualTo(0.0);
    double dead = Eventually.await("the dead gauge shows the dead event", DEADLINE,
        () -> meters.find("idem.outbox.dead").gauge().value(), v -> v >= 1);
    assertThat(dead).isGreaterThanOrEqualTo(1);
    assertThat(meters.find("idem.outbox.oldest.pending.age").timeGauge()).isNotNull();
    for (Meter m : meters.getMeters()) {
      for (Tag t : m.getId().getTags()) {
        assertThat(t.getValue()).as(m.getId().toString()).doesNotContain(delivered.toString(), refused.toString(),
            detail);
      }
    }
  }

  @Test
  void inboxMetersCountProcessedDuplicatesAndMismatchesByConsumer() {
    Inbox inbox = context.getBean(Inbox.class);
    String id = "evt_" + UUID.randomUUID();
    AtomicInteger runs = new AtomicInteger();
    byte[] payload = "{\"a\":1}".getBytes(StandardCharsets.UTF_8);

    InboxHandler handler = (tx, event) -> "run " + runs.incrementAndGet();
    inbox.processBatchAndCommit("billing", List.of(new InboxEvent(id, "test", payload)), handler);
    boolean duplicate = inbox.processBatchAndCommit("billing", List.of(new InboxEvent(id, "test", payload)), handler)
        .get(0).duplicate();
    InboxEvent changed = new InboxEvent(id, "test", "{\"a\":2}".getBytes(StandardCharsets.UTF_8));
    assertThatThrownBy(() -> inbox.processBatchAndCommit("billing", List.of(changed), handler))
        .isInstanceOf(InboxPayloadMismatchException.class);

    assertThat(duplicate).isTrue();
    assertThat(runs.get()).isEqualTo(1);
    assertThat(counter("idem.inbox.processed", "consumer", "billing")).isEqualTo(1);
    assertThat(counter("idem.inbox.duplicates", "consumer", "billing")).isEqualTo(1);
    assertThat(counter("idem.inbox.payload.mismatch", "consumer", "billing")).isEqualTo(1);
  }

  private HttpResponse<String> postWebhook(WebhookSecret secret, String id, long timestamp, String body)
      throws Exception {
    return postWebhook("/webhooks/provider", secret, id, timestamp, body);
  }

  private HttpResponse<String> postWebhook(String path, WebhookSecret secret, String id, long timestamp, String body)
      throws Exception {
    String signature = WebhookSigner.of(secret).sign(id, timestamp, body.getBytes(StandardCharsets.UTF_8));
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json").header("webhook-id", id)
        .header("webhook-timestamp", Long.toString(timestamp)).header("webhook-signature", signature)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  @Test
  void webhookReceiverRegisteredFromPropertiesHasOneEffectPerWebhookId() throws Exception {
    OutboxApp app = context.getBean(OutboxApp.class);
    String id = "msg_" + UUID.randomUUID();
    String body = "{\"type\":\"charge.succeeded\",\"id\":\"" + id + "\"}";
    long now = Instant.now().getEpochSecond();

    HttpResponse<String> first = postWebhook(current, id, now, body);
    HttpResponse<String> redelivered = postWebhook(previous, id, now + 30, body);
    HttpResponse<String> forged = postWebhook(WebhookSecret.generate(), "msg_" + UUID.randomUUID(), now, body);

    assertThat(first.statusCode()).isEqualTo(200);
    assertThat(first.body()).contains("\"duplicate\":false");
    assertThat(redelivered.statusCode()).isEqualTo(200);
    assertThat(redelivered.body()).contains("\"duplicate\":true");
    assertThat(forged.statusCode()).isEqualTo(401);
    assertThat(forged.body()).contains("urn:idem:problem:AUTH.webhook_signature_invalid");
    assertThat(Optional.ofNullable(app.effects.get(id)).map(AtomicInteger::get)).hasValue(1);
    assertThat(context.getBean(Inbox.class).contains("provider", id)).isTrue();
    assertThat(counter("idem.inbox.duplicates", "consumer", "provider")).isGreaterThanOrEqualTo(1);
  }

  @Test
  void aHandlersJdbcTemplateWritesJoinTheInboxTransaction() throws Exception {
    JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
    jdbc.execute("CREATE TABLE IF NOT EXISTS starter_webhook_effect (webhook_id VARCHAR(255) NOT NULL)");
    String ok = "msg_" + UUID.randomUUID();
    String failing = "msg_" + UUID.randomUUID();
    long now = Instant.now().getEpochSecond();

    HttpResponse<String> booked = postWebhook("/webhooks/ledger", current, ok, now, "{\"ok\":true}");
    HttpResponse<String> failed = postWebhook("/webhooks/ledger", current, failing, now, "{\"fail\":true}");

    assertThat(booked.statusCode()).isEqualTo(200);
    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM starter_webhook_effect WHERE webhook_id = ?", Integer.class,
        ok)).isEqualTo(1);
    assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM starter_webhook_effect WHERE webhook_id = ?", Integer.class,
        failing)).as("the template's write rolled back with the inbox").isZero();
    assertThat(context.getBean(Inbox.class).contains("ledger", failing)).isFalse();
  }
}
