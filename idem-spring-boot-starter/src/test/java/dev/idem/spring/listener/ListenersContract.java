package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.Inbox;
import dev.idem.test.Eventually;
import dev.idem.test.TcpProxy;
import dev.idem.test.TestPostgres;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What an {@link IdempotentListener} method guarantees on a real broker and database, whichever they are: each message
 * id takes effect once however often it is published or delivered, a failing method's writes roll back with the inbox
 * row, a poison message is dead-lettered after its attempts, a message without an id is rejected unrun, and every
 * message ends acknowledged. Each test has its own tables, topic or queue, and application.
 */
abstract class ListenersContract {
  static final Duration DEADLINE = Duration.ofSeconds(60);
  static final String CONSUMER = "payments";

  final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  final String tables = "listeners_" + suffix;
  ConfigurableApplicationContext context;

  /** A message that reached the dead-letter queue or topic. */
  record DeadLetter(String id, String payload, Map<String, Object> headers) {}

  /** The database's properties: {@code name=value}. */
  abstract List<String> database();

  /** Drops what the test created in the database. */
  abstract void dropTables();

  /** The broker's properties (its listener, its topic or queue); creates the topic or queue. */
  abstract List<String> broker() throws Exception;

  /** Publishes {@code payload} with message id {@code id}, or with none when it is null. */
  abstract void publish(String id, String payload) throws Exception;

  /** The one message that reached the dead-letter queue or topic, waiting for it. */
  abstract DeadLetter awaitDeadLetter() throws Exception;

  /** Checks that the dead letter tells how often and why its message failed. */
  abstract void assertAttemptsTold(DeadLetter dead, int attempts);

  /** Checks that the dead letter tells that its message had no id. */
  abstract void assertRefusalTold(DeadLetter dead);

  /**
   * Stops the application and checks that every message was acknowledged (RabbitMQ: none is left in the queue; Kafka:
   * the group's offsets are committed to the end).
   */
  abstract void stopAndAssertAllAcknowledged() throws Exception;

  /** Removes the topic or queue. */
  abstract void dropBroker() throws Exception;

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (context != null) {
        context.close();
      }
      dropBroker();
    } finally {
      dropTables();
    }
  }

  void start(String... properties) throws Exception {
    context = run(arguments(tables, database(), broker(), properties));
  }

  /**
   * The application's arguments: its outbox and inbox tables {@code <tables>_ob} and {@code <tables>_ib} (created at
   * startup), its effect table {@code <tables>_fx}, three attempts with a short backoff, then the database's, the
   * broker's and the test's {@code name=value} properties.
   */
  static List<String> arguments(String tables, List<String> database, List<String> broker, String... properties) {
    List<String> args = new ArrayList<>(List.of("--spring.main.web-application-type=none",
        "--spring.datasource.hikari.maximum-pool-size=4", "--idem.outbox.initialize-schema=true",
        "--idem.outbox.table=" + tables + "_ob", "--idem.outbox.inbox-table=" + tables + "_ib",
        "--idem.outbox.purge.enabled=false", "--listeners.effects=" + tables + "_fx",
        "--idem.listeners.max-attempts=3", "--idem.listeners.backoff.initial=10ms",
        "--idem.listeners.backoff.max=40ms"));
    database.forEach(p -> args.add("--" + p));
    broker.forEach(p -> args.add("--" + p));
    for (String p : properties) {
      args.add("--" + p);
    }
    return args;
  }

  /** Starts the application with {@code args} and creates its effect table, unless it exists. */
  static ConfigurableApplicationContext run(List<String> args) {
    ConfigurableApplicationContext started = new SpringApplicationBuilder(ListenersApp.class)
        .run(args.toArray(String[]::new));
    String table = started.getEnvironment().getRequiredProperty("listeners.effects");
    started.getBean(JdbcTemplate.class).execute("CREATE TABLE IF NOT EXISTS " + table
        + " (event_id VARCHAR(200) NOT NULL)");
    return started;
  }

  ListenersApp.Effects effects() {
    return context.getBean(ListenersApp.Effects.class);
  }

  ListenersApp.Outcomes outcomes() {
    return context.getBean(ListenersApp.Outcomes.class);
  }

  /** The starter's consumer meter {@code name} of consumer {@value #CONSUMER}, with {@code tags}. */
  double counter(String name, String... tags) {
    Counter c = context.getBean(MeterRegistry.class).find(name).tag("consumer", CONSUMER).tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  static String newId() {
    return UUID.randomUUID().toString();
  }

  @Test
  void eachMessageIdTakesEffectOnceHoweverOftenItIsPublished() throws Exception {
    start();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      String id = newId();
      ids.add(id);
      publish(id, "ok-" + i);
      publish(id, "ok-" + i); // a relay that crashed after sending sends it again
    }

    ListenersApp.Outcomes outcomes = outcomes();
    awaitThat("every message processed or found a duplicate",
        () -> outcomes.processed.size() + outcomes.duplicates.size() == 40);

    assertThat(outcomes.processed).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(outcomes.duplicates).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(effects().rows()).isEqualTo(20);
    for (String id : ids) {
      assertThat(effects().rows(id)).as(id).isEqualTo(1);
      assertThat(effects().calls(id)).as(id).isEqualTo(1);
    }
    assertThat(counter("idem.consumer.processed")).isEqualTo(20);
    assertThat(counter("idem.consumer.duplicates")).isEqualTo(20);
    stopAndAssertAllAcknowledged();
  }

  @Test
  void aMessageWhoseAcknowledgementIsLostComesAgainAndIsADuplicate() throws Exception {
    start("idem.listeners.max-hold=0s"); // the failure after the commit hands the message back to the broker
    String id = newId();

    publish(id, "ack-lost");
    ListenersApp.Outcomes outcomes = outcomes();
    awaitThat("the redelivery found a duplicate", () -> outcomes.duplicates.contains(id));

    assertThat(outcomes.processed).isEmpty();
    assertThat(outcomes.duplicates).containsExactly(id);
    assertThat(effects().calls(id)).isEqualTo(1);
    assertThat(effects().rows(id)).isEqualTo(1);
    assertThat(context.getBean(Inbox.class).contains(CONSUMER, id)).isTrue();
    stopAndAssertAllAcknowledged();
  }

  /** Held in the listener thread between tries (60 s), or handed back to the broker after each failure (0 s). */
  @ParameterizedTest
  @ValueSource(strings = {"60s", "0s"})
  void aListenerThatFailsTwiceThenSucceedsTakesEffectOnceAndItsFailedWritesRollBack(String maxHold)
      throws Exception {
    start("idem.listeners.max-hold=" + maxHold);
    String id = newId();

    publish(id, "flaky");
    ListenersApp.Outcomes outcomes = outcomes();
    awaitThat("the third call processed it", () -> outcomes.processed.contains(id));

    assertThat(effects().calls(id)).isEqualTo(3);
    assertThat(effects().rows(id)).as("the rows of the two failed calls rolled back").isEqualTo(1);
    assertThat(outcomes.deadLettered).isEmpty();
    stopAndAssertAllAcknowledged();
  }

  @Test
  void theWritesOfATransactionalServiceTheListenerCallsRollBackWithTheInboxRow() throws Exception {
    start();
    String id = newId();

    publish(id, "booked");
    ListenersApp.Outcomes outcomes = outcomes();
    awaitThat("the third call processed it", () -> outcomes.processed.contains(id));

    assertThat(effects().calls(id)).isEqualTo(3);
    assertThat(effects().rows(id)).as("the service's rows of the two failed calls rolled back").isEqualTo(1);
    stopAndAssertAllAcknowledged();
  }

  @ParameterizedTest
  @ValueSource(strings = {"60s", "0s"})
  void aPoisonMessageIsDeadLetteredAfterItsAttemptsAndLeavesNoEffectNorInboxRow(String maxHold) throws Exception {
    start("idem.listeners.max-hold=" + maxHold);
    String id = newId();
    String after = newId();

    publish(id, "poison");
    publish(after, "ok");
    DeadLetter dead = awaitDeadLetter();
    ListenersApp.Outcomes outcomes = outcomes();
    awaitThat("the message after the poison one processed", () -> outcomes.processed.contains(after));

    assertThat(dead.id()).isEqualTo(id);
    assertThat(dead.payload()).isEqualTo("poison");
    assertAttemptsTold(dead, 3);
    assertThat(effects().calls(id)).isEqualTo(3);
    assertThat(effects().rows(id)).as("each call's row rolled back with the inbox row").isZero();
    assertThat(context.getBean(Inbox.class).contains(CONSUMER, id)).isFalse();
    assertThat(outcomes.deadLettered).containsExactly(id);
    assertThat(counter("idem.consumer.dead.lettered", "reason", "handler_failed")).isEqualTo(1);
    assertThat(counter("idem.consumer.failures", "reason", "handler_failed")).isEqualTo(2);
    stopAndAssertAllAcknowledged();
  }

  @Test
  void aMessageWithoutAnIdIsRejectedWithoutRunningTheListener() throws Exception {
    start();
    String after = newId();

    publish(null, "no id");
    publish(after, "ok");
    DeadLetter dead = awaitDeadLetter();
    ListenersApp.Outcomes outcomes = outcomes();
    awaitThat("the message after it processed", () -> outcomes.processed.contains(after));

    assertThat(dead.payload()).isEqualTo("no id");
    assertRefusalTold(dead);
    assertThat(outcomes.rejected).containsExactly("missing_event_id");
    assertThat(effects().calls).containsOnlyKeys(after);
    stopAndAssertAllAcknowledged();
  }

  /**
   * While the database is away, the listener pauses and counts nothing against the messages: more pauses than the
   * attempts after which a failing message is given up on, and then each message takes effect once. For a subclass
   * whose {@link #database()} reads the URL that {@code useDatabaseAt} sets.
   */
  void whileTheDatabaseIsAwayTheListenerPausesAndGivesNothingUp(Consumer<String> useDatabaseAt) throws Exception {
    whileTheDatabaseIsAwayTheListenerPausesAndGivesNothingUp(useDatabaseAt, 6,
        "spring.datasource.hikari.connection-timeout=1000");
  }

  /**
   * The same, waiting for {@code pauses} pauses while the database is away, the application started with
   * {@code properties}.
   */
  void whileTheDatabaseIsAwayTheListenerPausesAndGivesNothingUp(Consumer<String> useDatabaseAt, int pauses,
      String... properties) throws Exception {
    URI postgres = URI.create(TestPostgres.url().substring("jdbc:".length()));
    List<String> during = List.of(newId(), newId());
    try (TcpProxy proxy = new TcpProxy(postgres.getHost(), postgres.getPort())) {
      useDatabaseAt.accept("jdbc:postgresql://127.0.0.1:" + proxy.port() + postgres.getPath());
      start(properties);
      String before = newId();
      publish(before, "ok");
      awaitThat("the first message processed", () -> outcomes().processed.contains(before));

      proxy.stop();
      for (String id : during) {
        publish(id, "ok");
      }
      awaitThat(pauses + " pauses, more than the attempts allowed",
          () -> counter("idem.consumer.paused") >= pauses);
      proxy.start();
      awaitThat("the messages processed once the database was back",
          () -> outcomes().processed.containsAll(during));

      assertThat(effects().rows()).isEqualTo(3);
      assertThat(counter("idem.consumer.failures", "reason", "handler_failed")).isZero();
      assertThat(outcomes().deadLettered).isEmpty();
      assertThat(outcomes().duplicates).isEmpty();
      for (String id : during) {
        assertThat(effects().calls(id)).as("the method ran only once the database was back").isEqualTo(1);
      }
      stopAndAssertAllAcknowledged();
    }
  }

  /** Waits until {@code condition} holds, failing after {@link #DEADLINE}; never a fixed sleep. */
  static void awaitThat(String what, BooleanSupplier condition) {
    Eventually.await(what, DEADLINE, condition::getAsBoolean, done -> done);
  }
}
