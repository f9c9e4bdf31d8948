package dev.idem.rabbitmq;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.OutboxMessage;
import dev.idem.test.ChildJvm;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * kill -9 of a RabbitMQ consumer JVM between the inbox commit and the acknowledgement, three times over, on the real
 * broker and PostgreSQL: the broker delivers the killed message again, the inbox skips it, and every message ends with
 * exactly one effect.
 */
class RabbitMqConsumerKillNineTest {
  private static final int MESSAGES = 60;

  private RabbitFixture f;

  @BeforeEach
  void setUp() throws Exception {
    f = new RabbitFixture();
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  @Test
  void killedBetweenTheInboxCommitAndTheAckEveryMessageStillHasExactlyOneEffect() throws Exception {
    List<String> ids = new ArrayList<>();
    try (RabbitMqTransport transport = RabbitMqTransport.builder(Rabbit.factory()).name("kill-nine").build()) {
      List<OutboxMessage> messages = new ArrayList<>();
      for (int i = 0; i < MESSAGES; i++) {
        OutboxMessage m = f.message(f.toExchange());
        messages.add(m);
        ids.add(m.id().toString());
      }
      assertThat(transport.sendAll(messages)).allMatch(DeliveryResult::isDelivered);
    }

    String lastKilled = null;
    for (int crashAt : new int[] {1, 7, 20}) {
      try (ChildJvm child = ChildJvm.start(RabbitConsumerCrashChild.class, List.of(Rabbit.uri(), f.queue,
          TestPostgres.url(), TestPostgres.user(), f.inboxTable, f.effects, Integer.toString(crashAt)))) {
        String id = child.awaitLine("INBOX-COMMITTED", ChildJvm.READY_TIMEOUT).split(" ")[1];

        assertThat(child.kill()).isEqualTo(137);

        // its effect committed, its acknowledgement never left: the broker holds the message for another delivery
        assertThat(f.effectCount(id)).isEqualTo(1);
        lastKilled = id;
      }
    }
    long before = f.effectCount();
    assertThat(before).isLessThan(MESSAGES);

    RabbitFixture.Counts counts = new RabbitFixture.Counts();
    Inbox inbox = f.inbox(counts);
    try (RabbitMqInboxConsumer consumer = RabbitMqInboxConsumer.builder(Rabbit.factory(), inbox, "billing", f.queue)
        .handler(f.recordEffect()).listener(counts).build().start()) {
      // the rest once each, and the last killed message again
      Eventually.await("every message acknowledged", Duration.ofSeconds(60), counts.acknowledged::get,
          n -> n == MESSAGES - before + 1);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    assertThat(f.ready(f.queue)).isZero();
    // the inbox took the path: the last killed message came again and was acknowledged as a duplicate
    assertThat(counts.acknowledgedDuplicates.get()).isEqualTo(1);
    assertThat(f.effectCount(lastKilled)).isEqualTo(1);
  }
}
