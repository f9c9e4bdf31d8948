package dev.idem.nats;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.OutboxMessage;
import dev.idem.test.ChildJvm;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import io.nats.client.JetStreamApiException;
import io.nats.client.api.ConsumerInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * kill -9 of a NATS JetStream consumer JVM between the inbox commit and the acknowledgement, three times over, on the
 * real server and PostgreSQL: JetStream delivers the unacknowledged message again after its ack wait, the inbox skips
 * it, and every message ends with exactly one effect.
 */
class NatsConsumerKillNineTest {
  private static final int MESSAGES = 60;

  private NatsFixture f;
  private String lastKilledId;
  private NatsFixture.Counts counts;

  @BeforeEach
  void setUp() throws Exception {
    f = new NatsFixture();
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  @Test
  void killedBetweenTheInboxCommitAndTheAckEveryMessageStillHasExactlyOneEffect() throws Exception {
    List<String> ids = new ArrayList<>();
    NatsJetStreamTransport transport = NatsJetStreamTransport.builder(f.nats).name("kill-nine").build();
    List<OutboxMessage> messages = new ArrayList<>();
    for (int i = 0; i < MESSAGES; i++) {
      OutboxMessage m = f.message();
      messages.add(m);
      ids.add(m.id().toString());
    }
    assertThat(transport.sendAll(messages)).allMatch(DeliveryResult::isDelivered);

    String lastKilled = null;
    for (int crashAt : new int[] {1, 7, 20}) {
      try (ChildJvm child = ChildJvm.start(NatsConsumerCrashChild.class, List.of(NatsServer.url(), f.stream,
          f.subject, TestPostgres.url(), TestPostgres.user(), f.inboxTable, f.effects, Integer.toString(crashAt)))) {
        String id = child.awaitLine("INBOX-COMMITTED", ChildJvm.READY_TIMEOUT).split(" ")[1];

        assertThat(child.kill()).isEqualTo(137);

        // its effect committed, its acknowledgement never left: JetStream delivers it again after the ack wait
        assertThat(f.effectCount(id)).isEqualTo(1);
        lastKilled = id;
      }
    }
    long before = f.effectCount();
    assertThat(before).isLessThan(MESSAGES);
    lastKilledId = lastKilled;

    counts = new NatsFixture.Counts();
    Inbox inbox = f.inbox(counts);
    try (NatsInboxConsumer consumer = NatsInboxConsumer.builder(f.nats, inbox, "billing", f.stream, f.subject)
        .handler(f.recordEffect()).listener(counts).ackWait(NatsConsumerCrashChild.ACK_WAIT)
        .fetchWait(Duration.ofMillis(100)).build().start()) {
      // the rest once each, and the last killed message again (an earlier one too, if its ack wait ended after
      // the next child was killed)
      Eventually.await("every message acknowledged", Duration.ofSeconds(60), this::drained, done -> done);
      assertThat(counts.acknowledged.get() - counts.acknowledgedDuplicates.get()).isEqualTo(MESSAGES - before);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    // the inbox took the path: the last killed message came again and was acknowledged as a duplicate
    assertThat(counts.acknowledgedDuplicates.get()).isBetween(1, 3);
    assertThat(f.effectCount(lastKilled)).isEqualTo(1);
  }

  /**
   * Every message has its effect, the durable consumer has nothing left to deliver or to be acknowledged, and the
   * last killed message came again.
   */
  private boolean drained() {
    try {
      ConsumerInfo info = f.jsm.getConsumerInfo(f.stream, "billing");
      return f.effectCount() == MESSAGES && info.getNumPending() == 0 && info.getNumAckPending() == 0
          && counts.acknowledgedDuplicates.get() >= 1 && f.effectCount(lastKilledId) == 1;
    } catch (IOException | JetStreamApiException e) {
      return false;
    }
  }
}
