package dev.idem.nats;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.OutboxMessage;
import dev.idem.test.Eventually;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.impl.Headers;
import java.nio.charset.StandardCharsets;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The inbox consumer on the real NATS JetStream and PostgreSQL: one effect per message id, acked after commit. */
class NatsInboxConsumerTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  private NatsFixture f;
  private NatsFixture.Counts counts;
  private Inbox inbox;
  private NatsJetStreamTransport transport;

  @BeforeEach
  void setUp() throws Exception {
    f = new NatsFixture();
    counts = new NatsFixture.Counts();
    inbox = f.inbox(counts);
    transport = NatsJetStreamTransport.builder(f.nats).name("consumer-test").build();
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  private NatsInboxConsumer.Builder consumer(NatsMessageHandler handler) {
    return NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject).handler(handler).listener(counts)
        .fetchWait(Duration.ofMillis(100));
  }

  private void publish(OutboxMessage m) {
    assertThat(transport.sendAll(List.of(m))).extracting(DeliveryResult::isDelivered).containsExactly(true);
  }

  private long ackPending(String durable) throws Exception {
    return f.jsm.getConsumerInfo(f.stream, durable).getNumAckPending();
  }

  @Test
  void aMessageRedeliveredAfterItsAckWaitEndedHasOneEffect() throws Exception {
    // a first consumer instance processes and commits the message, then dies before acknowledging it
    OutboxMessage m = f.message();
    publish(m);
    f.jsm.addOrUpdateConsumer(f.stream, ConsumerConfiguration.builder().durable("billing").filterSubject(f.subject)
        .ackPolicy(AckPolicy.Explicit).ackWait(Duration.ofSeconds(1)).build());
    JetStreamSubscription crashed = f.js.subscribe(f.subject, PullSubscribeOptions.bind(f.stream, "billing"));
    List<Message> fetched = crashed.fetch(1, Duration.ofSeconds(5));
    assertThat(fetched).hasSize(1);
    Message first = fetched.get(0);
    inbox.processAndCommit("billing", first.getHeaders().getFirst("Nats-Msg-Id"), "nats:" + f.subject,
        first.getData(), c -> f.recordEffect().handle(c, first));
    crashed.unsubscribe(); // no ack: JetStream delivers it again once the ack wait ends

    try (NatsInboxConsumer consumer = consumer(f.recordEffect()).ackWait(Duration.ofSeconds(1)).build().start()) {
      Eventually.await("the redelivery acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
      Eventually.await("nothing left unacknowledged", WAIT, () -> {
        try {
          return ackPending("billing");
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, n -> n == 0);
    }

    assertThat(counts.duplicates.get()).isEqualTo(1);
    assertThat(counts.acknowledgedDuplicates.get()).isEqualTo(1);
    assertThat(counts.processed.get()).isEqualTo(1);
    assertThat(f.effectCount(m.id().toString())).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
  }

  @Test
  void aFailingHandlerNaksTheMessageWhichIsThenProcessedOnce() throws Exception {
    OutboxMessage m = f.message();
    AtomicInteger calls = new AtomicInteger();
    AtomicLong lastDeliveryCount = new AtomicLong();
    NatsMessageHandler failsOnce = (c, msg) -> {
      if (calls.incrementAndGet() == 1) {
        throw new IllegalStateException("injected failure");
      }
      lastDeliveryCount.set(msg.metaData().deliveredCount());
      return f.recordEffect().handle(c, msg);
    };

    try (NatsInboxConsumer consumer = consumer(failsOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    assertThat(calls.get()).isEqualTo(2);
    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(lastDeliveryCount.get()).isEqualTo(2);
    assertThat(f.effectCount()).isEqualTo(1);
    assertThat(inbox.contains("billing", m.id().toString())).isTrue();
  }

  @Test
  void aMessageWhoseTransactionFailsToCommitIsNotAcknowledgedButRedelivered() throws Exception {
    // a deferred constraint fails at COMMIT, after the handler has returned
    String gate = f.table("nats_gate", "(k INT, CONSTRAINT nats_gate_u_" + f.suffix
        + " UNIQUE (k) DEFERRABLE INITIALLY DEFERRED)");
    OutboxMessage m = f.message();
    AtomicInteger calls = new AtomicInteger();
    NatsMessageHandler commitFailsOnce = (c, msg) -> {
      String result = f.recordEffect().handle(c, msg);
      if (calls.incrementAndGet() == 1) {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + gate + " (k) VALUES (1), (1)")) {
          ps.executeUpdate();
        }
      }
      return result;
    };

    try (NatsInboxConsumer consumer = consumer(commitFailsOnce).build().start()) {
      publish(m);
      Eventually.await("the message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    assertThat(calls.get()).isEqualTo(2);
    assertThat(counts.failed.get()).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
  }

  @Test
  void theSameIdWithAnotherPayloadIsTerminatedAndAMessageWithoutIdIsRejected() throws Exception {
    // JetStream itself would drop a second Nats-Msg-Id within its window, so this producer's id is in its own header
    NatsMessageHandler handler = (c, msg) -> {
      Databases.insertEffect(c, f.effects, msg.getHeaders().getFirst("Legacy-Id"));
      return null;
    };

    try (NatsInboxConsumer consumer = consumer(handler)
        .messageIdFallback(msg -> msg.hasHeaders() ? msg.getHeaders().getFirst("Legacy-Id") : null)
        .build().start()) {
      f.js.publish(f.subject, new Headers().put("Legacy-Id", "L-7"), "{\"v\":1}".getBytes(StandardCharsets.UTF_8));
      f.js.publish(f.subject, new Headers().put("Legacy-Id", "L-7"), "{\"v\":2}".getBytes(StandardCharsets.UTF_8));
      f.js.publish(f.subject, "{}".getBytes(StandardCharsets.UTF_8));
      Eventually.await("the original acknowledged, the altered copy and the anonymous one terminated", WAIT,
          () -> counts.acknowledged.get() + counts.consumerMismatches.get() + counts.rejected.get(), n -> n == 3);
      Eventually.await("nothing left unacknowledged", WAIT, () -> {
        try {
          return ackPending(consumer.durable());
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }, n -> n == 0);
    }

    assertThat(counts.acknowledged.get()).isEqualTo(1);
    assertThat(counts.consumerMismatches.get()).isEqualTo(1);
    assertThat(counts.mismatches.get()).isEqualTo(1);
    assertThat(counts.rejected.get()).isEqualTo(1);
    assertThat(f.effectCount("L-7")).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
  }

  @Test
  void aClosedConsumerStopsAndTheNextOneResumesFromTheDurable() throws Exception {
    OutboxMessage before = f.message();
    OutboxMessage after = f.message();
    try (NatsInboxConsumer consumer = consumer(f.recordEffect()).ackWait(Duration.ofSeconds(2)).build().start()) {
      publish(before);
      Eventually.await("the first message acknowledged", WAIT, counts.acknowledged::get, n -> n == 1);
    }

    publish(after);
    io.nats.client.api.ConsumerInfo info = f.jsm.getConsumerInfo(f.stream, "billing");
    assertThat(info.getNumPending() + info.getNumAckPending()).isEqualTo(1);
    assertThat(f.effectCount()).isEqualTo(1);
    try (NatsInboxConsumer consumer = consumer(f.recordEffect()).ackWait(Duration.ofSeconds(2)).build().start()) {
      Eventually.await("the second message acknowledged", WAIT, counts.acknowledged::get, n -> n == 2);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrder(before.id().toString(), after.id().toString());
  }

  @Test
  void startingOnAMissingStreamFailsWithTheStreamNamed() {
    NatsInboxConsumer consumer = NatsInboxConsumer.builder(f.nats, inbox, "billing", "NO_SUCH_STREAM_" + f.suffix,
        f.subject).handler(f.recordEffect()).build();

    assertThatThrownBy(consumer::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("NO_SUCH_STREAM_" + f.suffix)
        .hasMessageContaining("stream not found");
    consumer.close();
  }

  @Test
  void theBuilderRefusesBadConfiguration() {
    assertThatThrownBy(() -> NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject).build())
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("handler is required");
    assertThatThrownBy(() -> NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject)
        .ackWait(Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("ackWait must be 1 s to 12 h");
    assertThatThrownBy(() -> NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject)
        .durable("a.b"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("durable must be");
  }
}
