package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.outbox.Inbox;
import dev.idem.test.ChildJvm;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import dev.idem.test.kafka.KafkaBroker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * kill -9 of a consumer JVM between the inbox commit and the offset commit, three times over: the records of the
 * killed batch are read again, the inbox skips them, and every event ends with exactly one effect.
 */
class KafkaConsumerKillNineTest {
  private static final int EVENTS = 400;
  private static final int BATCH = 20;

  private KafkaFixture f;

  @BeforeEach
  void setUp() {
    f = new KafkaFixture(2);
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  @Test
  void killedBetweenInboxCommitAndOffsetCommitEveryEventStillHasExactlyOneEffect() throws Exception {
    List<String> ids = f.publish(EVENTS, 20);
    int lastRecords = 0;

    for (int crashAt : new int[] {1, 3, 4}) {
      try (ChildJvm child = ChildJvm.start(ConsumerCrashChild.class, List.of(KafkaBroker.bootstrapServers(), f.group,
          f.topic, TestPostgres.url(), TestPostgres.user(), f.inboxTable,
          f.effects, Integer.toString(crashAt), Integer.toString(BATCH)))) {
        String[] line = child.awaitLine("INBOX-COMMITTED", ChildJvm.READY_TIMEOUT).split(" ");
        int partition = Integer.parseInt(line[1]);
        long nextOffset = Long.parseLong(line[2]);
        int records = Integer.parseInt(line[3]);

        assertThat(child.kill()).isEqualTo(137);

        // the batch's effects are committed, its offset is not
        assertThat(f.committedOffset(partition)).isEqualTo(nextOffset - records);
        lastRecords = records;
      }
    }
    assertThat(f.effectCount()).isLessThan(EVENTS);

    KafkaFixture.Counts counts = new KafkaFixture.Counts();
    Inbox inbox = f.inbox(counts);
    try (KafkaInboxConsumer consumer = f.consumer(inbox).batchSize(BATCH).listener(counts).build().start()) {
      Eventually.await("every offset committed", Duration.ofSeconds(90), this::committed, n -> n == EVENTS);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    // the inbox took the path: the last killed batch came again and was skipped, record by record
    assertThat(counts.duplicates.get()).isEqualTo(lastRecords).isPositive();
  }

  private long committed() {
    try {
      return f.committedOffsets();
    } catch (Exception e) {
      return -1;
    }
  }
}
