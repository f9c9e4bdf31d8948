package dev.idem.test.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxListener;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.Reason;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.test.DatabaseOutage;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every inbox consumer (a broker adapter over {@link dev.idem.outbox.consumer.ConsumerEngine}) must pass:
 * RabbitMQ's, NATS's and Kafka's in this repository, and an adapter of your own. The kit publishes real messages to
 * a real broker, runs the consumer on a real {@link Inbox} whose handler counts one effect row per run in a table of
 * its own on PostgreSQL ({@link TestPostgres}), and checks what the consumer reported to its
 * {@link ConsumerListener}, what the handler saw and what the broker still holds.
 *
 * <p>Extend it with the broker message type {@code M} and implement the fixture: {@link #createInboxStore} (a store
 * on the given data source, creating its table if missing), {@link #publish} and {@link #publishWithoutId},
 * {@link #startConsumer} (mapping {@link ConsumerSettings#maxAttempts()} to the broker's own limit: RabbitMQ's
 * {@code maxFailures}, JetStream's {@code maxDeliver}, Kafka's {@code maxAttempts}), {@link #messageType},
 * {@link #eventIdIn} and {@link #unsettled}; and, where the broker keeps given-up messages, {@link #deadLetterIds}.
 * Give each test a destination of its own (a queue, a stream, a topic and a consumer group) in your own
 * {@code @BeforeEach}, and remove it in your own {@code @AfterEach}: the kit's {@code @BeforeEach} runs before yours
 * and its {@code @AfterEach} after yours; each test stops its consumer before it ends. Configure short retry pauses
 * (tens of milliseconds): a test waits at most {@link #WAIT} for anything, and never sleeps to decide a race.
 *
 * <p>Capabilities, for a broker that cannot honour a check by its nature (override them, documented):
 * <ul>
 *   <li>{@link #keepsDeadLetters()}: whether given-up and rejected messages are kept in a dead-letter destination
 *       the kit can read (a RabbitMQ queue's dead-letter exchange, Kafka's dead-letter topic). JetStream terminates
 *       them and keeps none: its kit runner returns false, and the kit checks the listener and the broker's pending
 *       count only.</li>
 * </ul>
 *
 * <p>A broker that drops a second publish of one id by itself (JetStream within its duplicate window) must still
 * deliver what {@link #publish} sends: its fixture publishes past that window (a short window, published again until
 * the broker stores the copy), since the kit checks what the consumer does with a copy, not the broker.
 */
public abstract class InboxConsumerContract<M> {
  /** How long a test waits for the consumer or the broker at most; a bound, never what is tested. */
  protected static final Duration WAIT = Duration.ofSeconds(30);
  /** The attempts a message whose handler keeps failing gets, passed as {@link ConsumerSettings#maxAttempts()}. */
  protected static final int MAX_ATTEMPTS = 3;
  /** The connections the database refuses in the outage test: twice the attempts a message gets. */
  protected static final int OUTAGE_CONNECTIONS = 2 * MAX_ATTEMPTS;
  /** The inbox's consumer name the kit passes. */
  protected static final String CONSUMER = "kit";

  /** What {@link #startConsumer} builds the consumer from. */
  public record ConsumerSettings(Inbox inbox, String consumer, InboxHandler handler, ConsumerListener listener,
      int maxAttempts) {}

  /** One run of the kit's handler: the event's id, the id read from its broker message, the payload. */
  public record HandlerRun(String eventId, String idInMessage, String payload) {}

  /** One thing the consumer or the inbox reported. */
  public record Heard(String what, String messageId, Decision decision, Reason reason) {}

  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  /** This test's inbox table. */
  protected final String inboxTable = "ick_ib_" + suffix;
  /** This test's effect table: one row per run of the handler that committed. */
  protected final String effects = "ick_fx_" + suffix;
  /** What the consumer and the inbox reported, in order. */
  protected final List<Heard> heard = new CopyOnWriteArrayList<>();
  /** Every run of the kit's handler, committed or not. */
  protected final List<HandlerRun> runs = new CopyOnWriteArrayList<>();
  /** The inbox's connections; refuses none until a test says so. */
  protected DatabaseOutage database;
  /** The inbox the consumer under test runs on. */
  protected Inbox inbox;
  private final Recorder recorder = new Recorder();

  // --------------------------------------------------------------------------------------------------- the fixture

  /** An inbox store on {@code dataSource} over {@code table}, creating the table if it is missing. */
  protected abstract InboxStore createInboxStore(DataSource dataSource, String table) throws Exception;

  /** Publishes one message with this event id and payload to the test's destination; returns once it is sent. */
  protected abstract void publish(String eventId, byte[] payload) throws Exception;

  /** Publishes one message with no event id at all (no header, no property) to the test's destination. */
  protected abstract void publishWithoutId(byte[] payload) throws Exception;

  /**
   * Builds and starts a consumer of the test's destination with these settings; closing the result stops it. The
   * consumer reports to {@code settings.listener()} and gives up on a message whose handler keeps failing on attempt
   * {@code settings.maxAttempts()}.
   */
  protected abstract AutoCloseable startConsumer(ConsumerSettings settings) throws Exception;

  /** The type of the broker's message that the handler's event carries ({@code event.message(type)}). */
  protected abstract Class<M> messageType();

  /** The event id the broker message carries (its message id, header or property), as published. */
  protected abstract String eventIdIn(M message);

  /**
   * How many messages the broker still holds for the consumer: ready or unacknowledged (RabbitMQ), pending or waiting
   * for an ack (JetStream), records past the committed offsets (Kafka). The kit asks after the consumer stopped.
   */
  protected abstract long unsettled() throws Exception;

  /** Whether given-up and rejected messages are kept where {@link #deadLetterIds} reads them (default true). */
  protected boolean keepsDeadLetters() {
    return true;
  }

  /**
   * The event ids of the messages in the dead-letter destination (null for a message without one), once there are at
   * least {@code atLeast} of them, waiting at most {@link #WAIT}. Called only when {@link #keepsDeadLetters()}.
   */
  protected List<String> deadLetterIds(int atLeast) throws Exception {
    throw new UnsupportedOperationException("keepsDeadLetters() is true: implement deadLetterIds(int) as well");
  }

  // ------------------------------------------------------------------------------------------------------ set-up

  @BeforeEach
  void setUpInboxConsumer() throws Exception {
    TestPostgres.createEffectTable(effects);
    createInboxStore(TestPostgres.postgres(), inboxTable); // creates the table while the database answers
    database = DatabaseOutage.refusing(TestPostgres.postgres(), 0);
    inbox = Inbox.builder(createInboxStore(database.dataSource(), inboxTable)).listener(recorder).build();
  }

  @AfterEach
  void tearDownInboxConsumer() {
    TestPostgres.drop(effects, inboxTable);
  }

  // ----------------------------------------------------------------------------------------------------- helpers

  /** Starts the consumer under test on the kit's inbox and listener with {@code handler}. */
  protected AutoCloseable start(InboxHandler handler) throws Exception {
    return startConsumer(new ConsumerSettings(inbox, CONSUMER, handler, recorder, MAX_ATTEMPTS));
  }

  /** The kit's handler: checks the broker message in the event, then writes one effect row. */
  protected InboxHandler effect() {
    return (tx, event) -> {
      M message = event.message(messageType());
      runs.add(new HandlerRun(event.eventId(), eventIdIn(message),
          new String(event.payload(), StandardCharsets.UTF_8)));
      TestPostgres.insertEffect(tx.unwrap(Connection.class), effects, event.eventId());
      return "applied " + event.eventId();
    };
  }

  /** A handler that throws for {@code failing} while {@code fails} says so, and writes the effect otherwise. */
  protected InboxHandler failing(String failing, Predicate<Integer> fails) {
    InboxHandler effect = effect();
    List<String> tries = new CopyOnWriteArrayList<>();
    return (tx, event) -> {
      if (event.eventId().equals(failing)) {
        tries.add(event.eventId());
        if (fails.test(tries.size())) {
          runs.add(new HandlerRun(event.eventId(), eventIdIn(event.message(messageType())), "failed"));
          throw new IllegalStateException("injected failure " + tries.size() + " of " + failing);
        }
      }
      return effect.handle(tx, event);
    };
  }

  protected static String newId() {
    return "evt-" + UUID.randomUUID();
  }

  protected static byte[] payload(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /** What was heard of kind {@code what} ({@code processed}, {@code duplicate}, {@code retried}, ...). */
  protected List<Heard> heard(String what) {
    List<Heard> of = new ArrayList<>();
    for (Heard h : heard) {
      if (h.what().equals(what)) {
        of.add(h);
      }
    }
    return of;
  }

  protected List<String> idsHeard(String what) {
    List<String> ids = new ArrayList<>();
    for (Heard h : heard(what)) {
      ids.add(h.messageId());
    }
    return ids;
  }

  protected int count(String what) {
    return heard(what).size();
  }

  protected List<String> runIds() {
    List<String> ids = new ArrayList<>();
    for (HandlerRun r : runs) {
      ids.add(r.eventId());
    }
    return ids;
  }

  protected static <T> T await(String what, Supplier<T> probe, Predicate<T> done) {
    return Eventually.await(what, WAIT, probe, done);
  }

  /** Waits until the broker holds nothing more for the consumer: every message was acknowledged or ended. */
  protected void awaitSettled() {
    await("the broker holds no message for the consumer", () -> {
      try {
        return unsettled();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, n -> n == 0);
  }

  // ------------------------------------------------------------------------------------------------------- cases

  @Test
  void aMessageIsProcessedOnceAndAcknowledgedAndTheHandlerSeesTheBrokerMessage() throws Exception {
    String id = newId();

    try (AutoCloseable consumer = start(effect())) {
      publish(id, payload("{\"n\":1}"));
      await("the message processed", () -> count("processed"), n -> n >= 1);
    }
    awaitSettled();

    assertThat(idsHeard("processed")).containsExactly(id);
    assertThat(runs).containsExactly(new HandlerRun(id, id, "{\"n\":1}"));
    assertThat(TestPostgres.effectIds(effects)).containsExactly(id);
    assertThat(inbox.contains(CONSUMER, id)).isTrue();
    assertThat(heard).extracting(Heard::what).containsOnly("processed", "inbox.processed");
  }

  @Test
  void theSameIdPublishedTwiceHasOneEffectAndTheSecondIsADuplicate() throws Exception {
    String id = newId();

    try (AutoCloseable consumer = start(effect())) {
      publish(id, payload("{\"n\":2}"));
      publish(id, payload("{\"n\":2}"));
      await("both copies acknowledged", () -> count("processed") + count("duplicate"), n -> n >= 2);
    }
    awaitSettled();

    assertThat(idsHeard("processed")).containsExactly(id);
    assertThat(idsHeard("duplicate")).containsExactly(id);
    assertThat(count("inbox.duplicate")).isEqualTo(1);
    assertThat(runIds()).containsExactly(id);
    assertThat(TestPostgres.effectCount(effects, id)).isEqualTo(1);
    assertThat(TestPostgres.effectCount(effects)).isEqualTo(1);
  }

  @Test
  void aHandlerFailingOnceIsRetriedThenProcessedWithOneEffect() throws Exception {
    String id = newId();

    try (AutoCloseable consumer = start(failing(id, attempt -> attempt == 1))) {
      publish(id, payload("{\"n\":3}"));
      await("the message processed", () -> count("processed"), n -> n >= 1);
    }
    awaitSettled();

    assertThat(heard("retried")).singleElement().satisfies(h -> {
      assertThat(h.messageId()).isEqualTo(id);
      assertThat(h.decision().reason()).isEqualTo(Reason.HANDLER_FAILED);
      assertThat(h.decision().counted()).isTrue();
      assertThat(h.decision().attempts()).isEqualTo(1);
    });
    assertThat(idsHeard("processed")).containsExactly(id);
    assertThat(runIds()).containsExactly(id, id);
    assertThat(TestPostgres.effectIds(effects)).containsExactly(id);
    assertThat(count("deadLettered")).isZero();
  }

  @Test
  void aHandlerAlwaysFailingIsGivenUpOnAfterMaxAttemptsAndTheNextMessageIsProcessed() throws Exception {
    String poison = newId();
    String next = newId();

    try (AutoCloseable consumer = start(failing(poison, attempt -> true))) {
      publish(poison, payload("{\"n\":4}"));
      publish(next, payload("{\"n\":5}"));
      await("the poison given up on and the next message processed",
          () -> count("deadLettered") + count("processed"), n -> n >= 2);
    }
    awaitSettled();

    assertThat(heard("deadLettered")).singleElement().satisfies(h -> {
      assertThat(h.messageId()).isEqualTo(poison);
      assertThat(h.decision().reason()).isEqualTo(Reason.HANDLER_FAILED);
      assertThat(h.decision().attempts()).isEqualTo(MAX_ATTEMPTS);
    });
    assertThat(heard("retried")).hasSize(MAX_ATTEMPTS - 1).allSatisfy(h -> {
      assertThat(h.messageId()).isEqualTo(poison);
      assertThat(h.decision().counted()).isTrue();
    });
    assertThat(idsHeard("processed")).containsExactly(next);
    assertThat(runs.stream().filter(r -> r.eventId().equals(poison)).count())
        .as("the poison's handler runs").isGreaterThanOrEqualTo(MAX_ATTEMPTS);
    assertThat(TestPostgres.effectIds(effects)).containsExactly(next);
    assertThat(inbox.contains(CONSUMER, poison)).isFalse();
    if (keepsDeadLetters()) {
      assertThat(deadLetterIds(1)).containsExactly(poison);
    }
  }

  @Test
  void aMessageWithoutAnIdIsRejectedWithoutRunningTheHandler() throws Exception {
    String next = newId();

    try (AutoCloseable consumer = start(effect())) {
      publishWithoutId(payload("{\"n\":6}"));
      publish(next, payload("{\"n\":7}"));
      await("the anonymous message rejected and the next one processed",
          () -> count("rejected") + count("processed"), n -> n >= 2);
    }
    awaitSettled();

    assertThat(heard("rejected")).singleElement().satisfies(h -> {
      assertThat(h.messageId()).isNull();
      assertThat(h.reason()).isEqualTo(Reason.MISSING_ID);
    });
    assertThat(runIds()).containsExactly(next);
    assertThat(TestPostgres.effectIds(effects)).containsExactly(next);
    assertThat(count("retried") + count("deadLettered")).isZero();
    if (keepsDeadLetters()) {
      assertThat(deadLetterIds(1)).containsExactly((String) null);
    }
  }

  @Test
  void theSameIdWithAnotherPayloadIsAPayloadMismatchAndTheFirstEffectStays() throws Exception {
    String id = newId();

    try (AutoCloseable consumer = start(effect())) {
      publish(id, payload("{\"amount\":100}"));
      await("the original processed", () -> count("processed"), n -> n >= 1);
      publish(id, payload("{\"amount\":999}"));
      await("the altered copy given up on", () -> count("deadLettered"), n -> n >= 1);
    }
    awaitSettled();

    assertThat(heard("deadLettered")).singleElement().satisfies(h -> {
      assertThat(h.messageId()).isEqualTo(id);
      assertThat(h.decision().reason()).isEqualTo(Reason.PAYLOAD_MISMATCH);
    });
    assertThat(idsHeard("inbox.payloadMismatch")).containsExactly(id);
    assertThat(runs).containsExactly(new HandlerRun(id, id, "{\"amount\":100}"));
    assertThat(TestPostgres.effectIds(effects)).containsExactly(id);
    assertThat(count("duplicate") + count("retried")).isZero();
    if (keepsDeadLetters()) {
      assertThat(deadLetterIds(1)).containsExactly(id);
    }
  }

  @Test
  void aDatabaseOutageLongerThanMaxAttemptsPausesCountsAgainstNoMessageAndIsWaitedOut() throws Exception {
    String id = newId();
    database.refuseNext(OUTAGE_CONNECTIONS);

    try (AutoCloseable consumer = start(effect())) {
      publish(id, payload("{\"n\":8}"));
      await("the message processed or given up on",
          () -> count("processed") + count("deadLettered") + count("rejected"), n -> n >= 1);
    }
    awaitSettled();

    assertThat(count("deadLettered")).as("messages given up on during the outage").isZero();
    assertThat(database.refused()).as("connections refused").isEqualTo(OUTAGE_CONNECTIONS);
    assertThat(heard("paused")).as("pauses, one per refused connection at most")
        .hasSizeBetween(1, OUTAGE_CONNECTIONS).allSatisfy(h -> {
          assertThat(h.messageId()).isEqualTo(id);
          assertThat(h.decision().reason()).isEqualTo(Reason.DATABASE_DOWN);
          assertThat(h.decision().counted()).isFalse();
          assertThat(h.decision().attempts()).as("failures counted against the message").isZero();
        });
    assertThat(count("retried")).as("failures counted against the message").isZero();
    assertThat(idsHeard("processed")).containsExactly(id);
    assertThat(runIds()).containsExactly(id);
    assertThat(TestPostgres.effectIds(effects)).containsExactly(id);
  }

  /** Hears the consumer and the inbox; the inbox's reports are prefixed {@code inbox.}. */
  private final class Recorder implements ConsumerListener, InboxListener {
    @Override
    public void processed(String consumer, String source, String messageId) {
      heard.add(new Heard("processed", messageId, null, null));
    }

    @Override
    public void duplicate(String consumer, String source, String messageId) {
      heard.add(new Heard("duplicate", messageId, null, null));
    }

    @Override
    public void retried(String consumer, String source, String messageId, Decision decision, Throwable error) {
      heard.add(new Heard("retried", messageId, decision, decision.reason()));
    }

    @Override
    public void paused(String consumer, String source, String messageId, Decision decision, Throwable error) {
      heard.add(new Heard("paused", messageId, decision, decision.reason()));
    }

    @Override
    public void rejected(String consumer, String source, String messageId, Reason reason, String detail) {
      heard.add(new Heard("rejected", messageId, null, reason));
    }

    @Override
    public void deadLettered(String consumer, String source, String messageId, Decision decision, Throwable error) {
      heard.add(new Heard("deadLettered", messageId, decision, decision.reason()));
    }

    @Override
    public void processed(String consumer) {
      heard.add(new Heard("inbox.processed", null, null, null));
    }

    @Override
    public void duplicate(String consumer) {
      heard.add(new Heard("inbox.duplicate", null, null, null));
    }

    @Override
    public void payloadMismatch(String consumer, String eventId) {
      heard.add(new Heard("inbox.payloadMismatch", eventId, null, null));
    }
  }
}
