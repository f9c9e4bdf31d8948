package dev.idem.nats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import io.nats.client.JetStreamApiException;
import io.nats.client.Message;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The inbox consumer's dead letters on the real NATS JetStream and PostgreSQL: a message given up on is published to
 * the dead-letter subject, stored by its stream with its data, headers and Idem's {@code idem-dlt-*} headers, before
 * it is terminated; a copy that cannot be stored leaves the original to be delivered again.
 */
class NatsDeadLetterTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  private NatsFixture f;
  private NatsFixture.Counts counts;
  private Inbox inbox;
  private String dltStream;
  private String dltSubject;

  @BeforeEach
  void setUp() throws Exception {
    f = new NatsFixture();
    counts = new NatsFixture.Counts();
    inbox = f.inbox(counts);
    dltStream = "IDEM_TEST_DLT_" + f.suffix;
    dltSubject = "idem.dlt." + f.suffix + ".events";
    createDeadLetterStream();
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (streamExists(dltStream)) {
        f.jsm.deleteStream(dltStream);
      }
    } finally {
      f.close();
    }
  }

  private void createDeadLetterStream() throws IOException, JetStreamApiException {
    f.jsm.addStream(StreamConfiguration.builder().name(dltStream).subjects(dltSubject)
        .storageType(StorageType.Memory).duplicateWindow(Duration.ofMinutes(2)).build());
  }

  private boolean streamExists(String name) throws IOException, JetStreamApiException {
    return f.jsm.getStreamNames().contains(name);
  }

  private NatsInboxConsumer.Builder consumer(InboxHandler handler) {
    return NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject).handler(handler).listener(counts)
        .fetchWait(Duration.ofMillis(100)).deadLetterSubject(dltSubject);
  }

  private long deadLetters() {
    try {
      return f.jsm.getStreamInfo(dltStream).getStreamState().getMsgCount();
    } catch (IOException | JetStreamApiException e) {
      throw new IllegalStateException(e);
    }
  }

  private List<MessageInfo> deadLetterMessages() throws IOException, JetStreamApiException {
    List<MessageInfo> all = new ArrayList<>();
    long last = f.jsm.getStreamInfo(dltStream).getStreamState().getLastSequence();
    for (long seq = 1; seq <= last; seq++) {
      all.add(f.jsm.getMessage(dltStream, seq));
    }
    return all;
  }

  private ConsumerInfo info(NatsInboxConsumer consumer) {
    try {
      return f.jsm.getConsumerInfo(f.stream, consumer.durable());
    } catch (IOException | JetStreamApiException e) {
      throw new IllegalStateException(e);
    }
  }

  private long publish(Headers headers, String body) throws IOException, JetStreamApiException {
    return f.js.publish(NatsMessage.builder().subject(f.subject).headers(headers)
        .data(body.getBytes(StandardCharsets.UTF_8)).build()).getSeqno();
  }

  @Test
  void aPoisonMessageIsStoredOnTheDeadLetterSubjectWithItsHistoryThenTerminated() throws Exception {
    InboxHandler alwaysFails = (tx, event) -> {
      throw new IllegalStateException("injected failure");
    };
    String id = UUID.randomUUID().toString();
    long seq;

    try (NatsInboxConsumer consumer = consumer(alwaysFails).maxDeliver(3)
        .nakBackoff(Duration.ofMillis(10), Duration.ofMillis(50)).build().start()) {
      seq = publish(new Headers().put(NatsInboxConsumer.MESSAGE_ID, id).put("tenant", "t-1")
          .add("trace", "a", "b"), "{\"poison\":true}");
      Eventually.await("the message given up on", WAIT, counts.gaveUp::get, n -> n == 1);
      Eventually.await("the original terminated: nothing left unacknowledged", WAIT,
          () -> info(consumer).getNumAckPending(), n -> n == 0);
      assertThat(deadLetters()).isEqualTo(1);
      // terminated, not handed back: no fourth delivery, though the durable allows more for failed dead letters
      assertThat(info(consumer).getNumPending()).isZero();
      assertThat(info(consumer).getConsumerConfiguration().getMaxDeliver())
          .isEqualTo(3 + NatsInboxConsumer.DEAD_LETTER_DELIVERIES);
      assertThat(consumer.isRunning()).isTrue();
    }

    assertThat(counts.failed.get()).isEqualTo(2);
    assertThat(counts.gaveUpDeliveries.get()).isEqualTo(3);
    assertThat(counts.deadLetterFailed.get()).isZero();
    assertThat(f.effectCount()).isZero();
    MessageInfo copy = deadLetterMessages().get(0);
    assertThat(copy.getSubject()).isEqualTo(dltSubject);
    assertThat(new String(copy.getData(), StandardCharsets.UTF_8)).isEqualTo("{\"poison\":true}");
    Headers h = copy.getHeaders();
    assertThat(h.getFirst("tenant")).isEqualTo("t-1");
    assertThat(h.get("trace")).containsExactly("a", "b");
    assertThat(h.getFirst(NatsInboxConsumer.MESSAGE_ID)).isEqualTo("idem-dlt:billing:" + f.stream + ":" + seq);
    assertThat(h.getFirst("idem-dlt-reason")).isEqualTo("handler_failed");
    assertThat(h.getFirst("idem-dlt-consumer")).isEqualTo("billing");
    assertThat(h.getFirst("idem-dlt-stream")).isEqualTo(f.stream);
    assertThat(h.getFirst("idem-dlt-subject")).isEqualTo(f.subject);
    assertThat(h.getFirst("idem-dlt-stream-sequence")).isEqualTo(Long.toString(seq));
    assertThat(h.getFirst("idem-dlt-message-id")).isEqualTo(id);
    assertThat(h.getFirst("idem-dlt-attempts")).isEqualTo("3");
    for (int n = 1; n <= 3; n++) {
      assertThat(h.getFirst("idem-dlt-attempt-" + n)).as("failure line " + n)
          .contains("IllegalStateException").contains("injected failure");
    }
    assertThat(h.getFirst("idem-dlt-attempt-4")).isNull();
  }

  @Test
  void aPayloadMismatchAndAMessageWithoutIdAreStoredOnTheDeadLetterSubject() throws Exception {
    // JetStream itself would drop a second Nats-Msg-Id within its window, so this producer's id is in its own header
    InboxHandler handler = (tx, event) -> {
      Message msg = event.message(Message.class);
      TestPostgres.insertEffect(tx.unwrap(Connection.class), f.effects, msg.getHeaders().getFirst("Legacy-Id"));
      return null;
    };

    try (NatsInboxConsumer consumer = consumer(handler)
        .messageIdFallback(msg -> msg.hasHeaders() ? msg.getHeaders().getFirst("Legacy-Id") : null)
        .build().start()) {
      publish(new Headers().put("Legacy-Id", "L-7"), "{\"v\":1}");
      publish(new Headers().put("Legacy-Id", "L-7"), "{\"v\":2}");
      f.js.publish(f.subject, "{}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the original acknowledged, the altered copy and the anonymous one dead-lettered", WAIT,
          () -> counts.acknowledged.get() + counts.consumerMismatches.get() + counts.rejected.get(), n -> n == 3);
      Eventually.await("nothing left unacknowledged", WAIT, () -> info(consumer).getNumAckPending(), n -> n == 0);
    }

    assertThat(counts.consumerMismatches.get()).isEqualTo(1);
    assertThat(counts.rejected.get()).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
    List<MessageInfo> copies = deadLetterMessages();
    assertThat(copies).hasSize(2);
    MessageInfo mismatch = copies.stream().filter(c -> c.getHeaders().getFirst("Legacy-Id") != null).findFirst()
        .orElseThrow();
    assertThat(new String(mismatch.getData(), StandardCharsets.UTF_8)).isEqualTo("{\"v\":2}");
    assertThat(mismatch.getHeaders().getFirst("Legacy-Id")).isEqualTo("L-7");
    assertThat(mismatch.getHeaders().getFirst("idem-dlt-reason")).isEqualTo("payload_mismatch");
    assertThat(mismatch.getHeaders().getFirst("idem-dlt-stream-sequence")).isEqualTo("2");
    MessageInfo anonymous = copies.stream().filter(c -> c.getHeaders().getFirst("Legacy-Id") == null).findFirst()
        .orElseThrow();
    assertThat(new String(anonymous.getData(), StandardCharsets.UTF_8)).isEqualTo("{}");
    assertThat(anonymous.getHeaders().getFirst("idem-dlt-reason")).isEqualTo("missing_event_id");
    assertThat(anonymous.getHeaders().getFirst("idem-dlt-attempts")).isEqualTo("0");
    assertThat(anonymous.getHeaders().getFirst("idem-dlt-message-id")).isNull();
    assertThat(anonymous.getHeaders().getFirst("idem-dlt-attempt-1")).isNull();
    assertThat(anonymous.getHeaders().getFirst(NatsInboxConsumer.MESSAGE_ID))
        .isEqualTo("idem-dlt:billing:" + f.stream + ":3");
  }

  @Test
  void aDeadLetterNoStreamTakesLeavesTheOriginalToBeDeliveredAgainTillItIsStored() throws Exception {
    try (NatsInboxConsumer consumer = consumer(f.recordEffect()).build().start()) {
      f.jsm.deleteStream(dltStream); // after the start, which checks that a stream captures the subject
      f.js.publish(f.subject, new Headers().put("tenant", "t-1"), "{}".getBytes(StandardCharsets.UTF_8));

      // JetStream answers "no responders": the message is handed back, not terminated, and delivered again
      Eventually.await("the failed dead letter reported on two deliveries", WAIT, counts.deadLetterFailed::get,
          n -> n >= 2);
      assertThat(counts.rejected.get()).isZero();
      assertThat(info(consumer).getRedelivered()).isGreaterThanOrEqualTo(1);
      assertThat(info(consumer).getNumAckPending() + info(consumer).getNumPending()).isEqualTo(1);

      createDeadLetterStream();
      Eventually.await("the message dead-lettered once the stream exists", WAIT, counts.rejected::get, n -> n == 1);
      Eventually.await("the original terminated", WAIT, () -> info(consumer).getNumAckPending(), n -> n == 0);
      assertThat(deadLetters()).isEqualTo(1);
      assertThat(deadLetterMessages().get(0).getHeaders().getFirst("tenant")).isEqualTo("t-1");
    }
    assertThat(f.effectCount()).isZero();
  }

  @Test
  void aMessageDeadLetteredAgainIsDroppedAsADuplicateByTheDeadLetterStream() throws Exception {
    String durable;
    try (NatsInboxConsumer consumer = consumer(f.recordEffect()).build().start()) {
      durable = consumer.durable();
      f.js.publish(f.subject, "{\"anonymous\":true}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the message dead-lettered", WAIT, counts.rejected::get, n -> n == 1);
      Eventually.await("the original terminated", WAIT, () -> info(consumer).getNumAckPending(), n -> n == 0);
    }
    assertThat(deadLetters()).isEqualTo(1);

    // the durable consumer is recreated: JetStream delivers the stream from its start, and the same message is given
    // up on again, under the same consumer name
    f.jsm.deleteConsumer(f.stream, durable);
    try (NatsInboxConsumer consumer = consumer(f.recordEffect()).build().start()) {
      Eventually.await("the message dead-lettered again", WAIT, counts.rejected::get, n -> n == 2);
      Eventually.await("the original terminated again", WAIT, () -> info(consumer).getNumAckPending(), n -> n == 0);
    }
    assertThat(counts.deadLetterFailed.get()).isZero();
    assertThat(deadLetters()).isEqualTo(1);
    assertThat(f.storedMessages()).isEqualTo(1);
  }

  @Test
  void startingFailsWhenNoStreamCapturesTheDeadLetterSubject() {
    NatsInboxConsumer consumer = NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject)
        .handler(f.recordEffect()).deadLetterSubject("idem.nowhere." + f.suffix).build();

    assertThatThrownBy(consumer::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no stream captures its dead-letter subject 'idem.nowhere." + f.suffix + "'");
    consumer.close();
  }

  @Test
  void theBuilderRefusesABadDeadLetterSubject() {
    NatsInboxConsumer.Builder b = NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject);
    assertThatThrownBy(() -> b.deadLetterSubject(null))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be empty");
    assertThatThrownBy(() -> b.deadLetterSubject(" "))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not be empty");
    assertThatThrownBy(() -> b.deadLetterSubject("orders dlt"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must not contain spaces");
    assertThatThrownBy(() -> b.deadLetterSubject("orders.*"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without the wildcards");
    assertThatThrownBy(() -> b.deadLetterSubject("orders.>"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without the wildcards");
    assertThatThrownBy(() -> b.deadLetterSubject("orders..dlt"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("empty token");
    assertThatThrownBy(() -> b.deadLetterSubject(f.subject))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("would consume its own dead letters");
    assertThatThrownBy(() -> b.deadLetterSubject("x".repeat(241)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at most 240 characters");
    assertThatThrownBy(() -> b.deadLetterTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("deadLetterTimeout");
    // a wildcard subject of the consumer matches the subjects under it
    NatsInboxConsumer.Builder wide = NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream,
        "orders.*.placed");
    assertThatThrownBy(() -> wide.deadLetterSubject("orders.eu.placed"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'orders.*.placed'");
    assertThat(wide.deadLetterSubject("orders.eu.placed.dlt").handler(f.recordEffect()).build().deadLetterSubject())
        .isEqualTo("orders.eu.placed.dlt");
    NatsInboxConsumer.Builder all = NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, "orders.>");
    assertThatThrownBy(() -> all.deadLetterSubject("orders.dlt"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'orders.>'");
    assertThat(all.deadLetterSubject("orders").handler(f.recordEffect()).build().deadLetterSubject())
        .isEqualTo("orders");
    assertThat(b.handler(f.recordEffect()).build().deadLetterSubject()).isNull();
  }
}
