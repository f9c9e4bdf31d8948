package dev.idem.spring.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.nats.NatsInboxConsumer;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.PublishAck;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A Spring Boot application whose NATS JetStream inbox consumer comes from properties alone (its own connection from
 * {@code idem.consumers.nats.url}), on the local NATS server and PostgreSQL, with a stream, a durable consumer and
 * tables of its own: each message id takes effect once though it is stored twice, a poison message is terminated on
 * its last allowed delivery (stored first on the {@code dead-letter-subject} when it is set), and the meters count
 * both.
 */
class NatsConsumersStarterTest {
  private static final Duration DEADLINE = Duration.ofSeconds(30);

  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String name = "ledger-" + suffix;
  private final String effects = "cst_nats_fx_" + suffix;
  private final String stream = "IDEM_STARTER_" + suffix;
  private final String subject = "idem.starter." + suffix + ".events";
  private final String dltStream = "IDEM_STARTER_DLT_" + suffix;
  private final String dltSubject = "idem.starter-dlt." + suffix + ".events";
  private Connection nats;
  private JetStream js;
  private JetStreamManagement jsm;
  private ConfigurableApplicationContext context;

  static String url() {
    return System.getProperty("idem.test.nats.url", "nats://127.0.0.1:4222");
  }

  @BeforeEach
  void setUp() throws Exception {
    TestPostgres.createEffectTable(effects);
    nats = Nats.connect(Options.builder().server(url()).connectionTimeout(Duration.ofSeconds(5)).build());
    jsm = nats.jetStreamManagement();
    js = nats.jetStream();
    // a short duplicate window, so that a second copy of a message id can be stored once it has passed
    jsm.addStream(StreamConfiguration.builder().name(stream).subjects(subject).storageType(StorageType.Memory)
        .duplicateWindow(Duration.ofMillis(100)).build());
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (context != null) {
        context.close();
      }
      jsm.deleteStream(stream);
      if (jsm.getStreamNames().contains(dltStream)) {
        jsm.deleteStream(dltStream);
      }
      nats.close();
    } finally {
      ConsumersApp.dropTables("cst_nats_" + suffix, effects);
    }
  }

  private ConfigurableApplicationContext start() {
    return start("recordEffect");
  }

  private ConfigurableApplicationContext start(String handler, String... more) {
    String consumer = "idem.consumers." + name;
    List<String> properties = new ArrayList<>(List.of(
        "idem.consumers.nats.url=" + url(),
        consumer + ".handler=" + handler,
        consumer + ".nats.stream=" + stream,
        consumer + ".nats.subject=" + subject,
        consumer + ".nats.max-deliver=3",
        consumer + ".nats.nak-delay=10ms",
        consumer + ".nats.fetch-wait=100ms"));
    properties.addAll(List.of(more));
    return ConsumersApp.runOnPostgres("cst_nats_" + suffix, effects, properties.toArray(String[]::new));
  }

  private PublishAck publish(String messageId, String body) {
    Headers headers = new Headers().add(NatsInboxConsumer.MESSAGE_ID, messageId);
    try {
      return js.publish(NatsMessage.builder().subject(subject).headers(headers)
          .data(body.getBytes(StandardCharsets.UTF_8)).build());
    } catch (IOException | JetStreamApiException e) {
      throw new IllegalStateException(e);
    }
  }

  private double counter(String meter, String... tags) {
    Counter c = context.getBean(MeterRegistry.class).find(meter).tag("consumer", name).tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void eachMessageIdTakesEffectOnceAndAPoisonMessageIsTerminated() throws Exception {
    AtomicInteger terminated = new AtomicInteger();
    Dispatcher advisories = nats.createDispatcher(m -> terminated.incrementAndGet());
    advisories.subscribe("$JS.EVENT.ADVISORY.CONSUMER.MSG_TERMINATED." + stream + "." + name);
    context = start();
    assertThat(context.getBean(InboxConsumerLifecycle.class).consumer()).get()
        .isInstanceOf(NatsInboxConsumer.class);

    int n = 20;
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = UUID.randomUUID().toString();
      ids.add(id);
      assertThat(publish(id, "entry " + i).isDuplicate()).isFalse();
    }
    Eventually.await("every id took effect", DEADLINE, () -> TestPostgres.effectCount(effects), c -> c >= n);
    for (int i = 0; i < n; i++) {
      // a second copy of each message, stored once the stream's duplicate window has passed (until then dropped)
      String id = ids.get(i);
      String body = "entry " + i;
      Eventually.await("a second copy of " + id + " is stored", DEADLINE, () -> publish(id, body).isDuplicate(),
          duplicate -> !duplicate);
    }
    String poison = UUID.randomUUID().toString();
    publish(poison, "poison");

    Eventually.await("every second copy was acknowledged as a duplicate", DEADLINE,
        () -> counter("idem.consumer.duplicates"), c -> c >= n);
    Eventually.await("the poison message is terminated", DEADLINE,
        () -> counter("idem.consumer.dead.lettered", "reason", "handler_failed"), c -> c >= 1);
    Eventually.await("JetStream told of the termination", DEADLINE, terminated::get, c -> c >= 1);
    Eventually.await("every first copy counted", DEADLINE, () -> counter("idem.consumer.processed"), c -> c >= n);

    assertThat(TestPostgres.effectCount(effects)).isEqualTo(n);
    assertThat(TestPostgres.eventsWithSeveralEffects(effects)).isZero();
    assertThat(TestPostgres.effectIds(effects)).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(TestPostgres.effectCount(effects, poison)).isZero();
    assertThat(counter("idem.consumer.processed")).isEqualTo(n);
    assertThat(counter("idem.consumer.duplicates")).isEqualTo(n);
    assertThat(counter("idem.consumer.dead.lettered", "reason", "handler_failed")).isEqualTo(1);
    // the first two of the poison message's three deliveries were handed back, the third terminated it
    assertThat(counter("idem.consumer.failures", "reason", "handler_failed")).isEqualTo(2);
    assertThat(terminated.get()).isEqualTo(1);
    Eventually.await("nothing is left unacknowledged", DEADLINE, this::ackPending, c -> c == 0);
  }

  @Test
  void theFirstDeliveryOrderPropertyRunsTheHandlerBeforeTheInboxRowAndCopiesStayDuplicates() {
    context = start("recordInboxOrder", "idem.consumers." + name + ".nats.first-delivery-order=true");
    String id = UUID.randomUUID().toString();
    assertThat(publish(id, "entry").isDuplicate()).isFalse();
    Eventually.await("the message took effect", DEADLINE, () -> TestPostgres.effectCount(effects), c -> c == 1);
    // delivered once: the handler ran before the inbox row was written
    assertThat(TestPostgres.effectIds(effects)).containsExactly("first:" + id);

    // a second copy, stored once the duplicate window has passed: delivered once too, so tried in that order as well
    Eventually.await("a second copy is stored", DEADLINE, () -> publish(id, "entry").isDuplicate(), d -> !d);
    Eventually.await("the copy was acknowledged as a duplicate", DEADLINE, () -> counter("idem.consumer.duplicates"),
        c -> c == 1);
    assertThat(TestPostgres.effectIds(effects)).containsExactly("first:" + id);
    assertThat(counter("idem.consumer.processed")).isEqualTo(1);
  }

  @Test
  void aPoisonMessageIsStoredOnTheDeadLetterSubjectOfThePropertiesBeforeItIsTerminated() throws Exception {
    jsm.addStream(StreamConfiguration.builder().name(dltStream).subjects(dltSubject).storageType(StorageType.Memory)
        .build());
    context = start("recordEffect", "idem.consumers." + name + ".nats.dead-letter-subject=" + dltSubject,
        "idem.consumers." + name + ".nats.dead-letter-timeout=5s");
    assertThat(context.getBean(InboxConsumerLifecycle.class).consumer()).get()
        .isInstanceOf(NatsInboxConsumer.class)
        .extracting(c -> ((NatsInboxConsumer) c).deadLetterSubject()).isEqualTo(dltSubject);
    String poison = UUID.randomUUID().toString();
    publish(poison, "poison");

    Eventually.await("the poison message is dead-lettered", DEADLINE,
        () -> counter("idem.consumer.dead.lettered", "reason", "handler_failed"), c -> c >= 1);
    Eventually.await("nothing is left unacknowledged", DEADLINE, this::ackPending, c -> c == 0);
    assertThat(jsm.getStreamInfo(dltStream).getStreamState().getMsgCount()).isEqualTo(1);
    MessageInfo copy = jsm.getMessage(dltStream, 1);
    assertThat(new String(copy.getData(), StandardCharsets.UTF_8)).isEqualTo("poison");
    assertThat(copy.getHeaders().getFirst("idem-dlt-message-id")).isEqualTo(poison);
    assertThat(copy.getHeaders().getFirst("idem-dlt-consumer")).isEqualTo(name);
    assertThat(copy.getHeaders().getFirst("idem-dlt-attempts")).isEqualTo("3");
    assertThat(counter("idem.consumer.errors", "kind", "dead_letter")).isZero();
  }

  @Test
  void aBadDeadLetterSubjectOrOneNoStreamCapturesFailsTheStartNamingTheProperty() {
    String property = "idem.consumers." + name + ".nats.dead-letter-subject";
    assertThatThrownBy(() -> start("recordEffect", property + "=" + subject).close())
        .satisfies(e -> assertThat(messages(e)).contains(property + ": deadLetterSubject '" + subject
            + "' is matched by the consumer's own subject"));
    assertThatThrownBy(() -> start("recordEffect", property + "=idem.starter-dlt.*").close())
        .satisfies(e -> assertThat(messages(e)).contains(property + ": deadLetterSubject must be one subject"));
    assertThatThrownBy(() -> start("recordEffect", property + "=" + dltSubject).close())
        .satisfies(e -> assertThat(messages(e)).contains("no stream captures its dead-letter subject '" + dltSubject
            + "'"));
  }

  private static String messages(Throwable e) {
    StringBuilder all = new StringBuilder();
    for (Throwable c = e; c != null; c = c.getCause()) {
      all.append(c.getMessage()).append('\n');
    }
    return all.toString();
  }

  private long ackPending() {
    try {
      return jsm.getConsumerInfo(stream, name).getNumAckPending();
    } catch (IOException | JetStreamApiException e) {
      throw new IllegalStateException(e);
    }
  }
}
