package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.consumer.ConsumerListener;
import dev.idem.test.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Two consumers of one group, one of them stopped mid-stream: every event has exactly one effect. */
class KafkaRebalanceTest {
  private static final int EVENTS = 2000;
  private static final Duration WAIT = Duration.ofSeconds(120);

  private KafkaFixture f;

  @BeforeEach
  void setUp() {
    f = new KafkaFixture(4);
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  @Test
  void aConsumerClosedMidStreamHandsItsPartitionsOverWithoutLossOrDoubles() throws Exception {
    List<String> ids = f.publish(EVENTS, 50);
    KafkaFixture.Counts counts = new KafkaFixture.Counts();
    Inbox inbox = f.inbox(counts);
    AtomicInteger seenByA = new AtomicInteger();
    CountDownLatch midStream = new CountDownLatch(1);
    InboxHandler effect = f.recordEffect();
    Set<Integer> partitionsOfA = ConcurrentHashMap.newKeySet();
    Set<Integer> partitionsOfBAfterA = ConcurrentHashMap.newKeySet();
    AtomicBoolean aClosed = new AtomicBoolean();
    ConsumerListener listenerB = new ConsumerListener() {
      @Override
      public void committed(String consumer, String source, long nextOffset, int records, int duplicates) {
        if (aClosed.get()) {
          partitionsOfBAfterA.add(KafkaFixture.partition(source));
        }
      }
    };

    try (KafkaInboxConsumer b = f.consumer(inbox).batchSize(25).listener(listenerB).build()) {
      KafkaInboxConsumer a = f.consumer(inbox).batchSize(25).listener(new ConsumerListener() {
        @Override
        public void committed(String consumer, String source, long nextOffset, int records, int duplicates) {
          partitionsOfA.add(KafkaFixture.partition(source));
        }
      }).handler((tx, event) -> {
        if (seenByA.incrementAndGet() == 300) {
          midStream.countDown();
        }
        return effect.handle(tx, event);
      }).build().start();
      b.start();
      assertThat(midStream.await(60, TimeUnit.SECONDS)).isTrue();

      a.close();
      aClosed.set(true);
      Eventually.await("every offset committed", WAIT, this::committed, n -> n == EVENTS);
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    assertThat(counts.processed.get()).isEqualTo(EVENTS);
    // B went on with at least one partition that A had been consuming
    assertThat(partitionsOfBAfterA).containsAnyElementsOf(partitionsOfA);
  }

  @Test
  void aStalledConsumerThrownOutOfTheGroupHasItsCommittedBatchSkippedByTheNewOwner() throws Exception {
    List<String> ids = f.publish(EVENTS, 50);
    KafkaFixture.Counts countsA = new KafkaFixture.Counts();
    KafkaFixture.Counts countsB = new KafkaFixture.Counts();
    CountDownLatch stalled = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger stalledRecords = new AtomicInteger();
    ConsumerListener stallingA = new ConsumerListener() {
      private int batches;

      @Override
      public void committed(String consumer, String source, long nextOffset, int records, int duplicates) {
        countsA.committed(consumer, source, nextOffset, records, duplicates);
        if (++batches == 3) {
          // the batch's effects are committed; stall past max.poll.interval.ms before its offset commit
          stalledRecords.set(records);
          stalled.countDown();
          try {
            release.await(120, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }

      @Override
      public void answerFailed(String consumer, String source, String messageId, Throwable error) {
        countsA.answerFailed(consumer, source, messageId, error);
      }
    };
    Map<String, Object> configA = f.consumerConfig();
    configA.put("max.poll.interval.ms", "3000");

    KafkaInboxConsumer a = KafkaInboxConsumer.builder(configA, f.inbox(countsA), List.of(f.topic))
        .handler(f.recordEffect()).batchSize(25).pollTimeout(Duration.ofMillis(100)).listener(stallingA).build();
    try (KafkaInboxConsumer b = f.consumer(f.inbox(countsB)).batchSize(25).listener(countsB).build()) {
      a.start();
      assertThat(stalled.await(60, TimeUnit.SECONDS)).isTrue();
      b.start();

      Eventually.await("every offset committed by the new owner", WAIT, this::committed, n -> n == EVENTS);
      assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
      release.countDown();
      Eventually.await("the stalled consumer's late offset commit refused", WAIT, countsA.commitFailures::get,
          n -> n >= 1);
    } finally {
      release.countDown();
      a.close();
    }

    assertThat(f.effectIds()).containsExactlyInAnyOrderElementsOf(ids);
    assertThat(f.eventsWithSeveralEffects()).isZero();
    // the new owner read the stalled batch again and the inbox skipped every record of it
    assertThat(countsB.duplicates.get()).isEqualTo(stalledRecords.get()).isPositive();
  }

  private long committed() {
    try {
      return f.committedOffsets();
    } catch (Exception e) {
      return -1;
    }
  }
}
