package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Two listener containers in one group (concurrency 2, a partition each). The one that takes the record is stuck after
 * its transaction committed and before its offset commit, past {@code max.poll.interval.ms}: the group rebalances, the
 * other container gets the partition and the record again, and finds it a duplicate. One effect; the method ran once.
 */
class PostgresKafkaRebalanceTest {
  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String tables = "listeners_" + suffix;
  private final String topic = "listeners-rebalance-" + suffix;
  private ConfigurableApplicationContext context;

  @AfterEach
  void tearDown() throws Exception {
    ListenersApp.Effects.release.countDown();
    try {
      if (context != null) {
        context.close();
      }
      KafkaListenersContract.deleteTopics(topic);
    } finally {
      PostgresKafkaListenersTest.dropTables(tables);
    }
  }

  @RepeatedTest(3)
  void aContainerStuckBeforeItsOffsetCommitLosesThePartitionAndTheOtherFindsTheRecordADuplicate()
      throws Exception {
    ListenersApp.Effects.stalled = new CountDownLatch(1);
    ListenersApp.Effects.release = new CountDownLatch(1);
    KafkaListenersContract.createTopics(topic);
    List<String> broker = new ArrayList<>(KafkaListenersContract.kafkaProperties(topic));
    broker.add("listeners.kafka.concurrency=2");
    broker.add("spring.kafka.consumer.properties.max.poll.interval.ms=3000");
    broker.add("spring.kafka.consumer.properties.session.timeout.ms=6000");
    broker.add("spring.kafka.consumer.properties.heartbeat.interval.ms=500");
    broker.add("spring.kafka.listener.poll-timeout=200ms");
    context = ListenersContract.run(ListenersContract.arguments(tables, PostgresKafkaListenersTest.postgres(),
        broker));
    String id = UUID.randomUUID().toString();

    ProducerRecord<String, String> stall = KafkaListenersContract.record(topic, id, "stall");
    try (KafkaProducer<String, String> producer = KafkaListenersContract.producer()) {
      producer.send(new ProducerRecord<>(topic, 0, stall.key(), stall.value(), stall.headers())).get();
    }
    assertThat(ListenersApp.Effects.stalled.await(60, TimeUnit.SECONDS)).as("the first delivery committed").isTrue();
    ListenersApp.Outcomes outcomes = context.getBean(ListenersApp.Outcomes.class);
    Eventually.await("the other container got the record after the rebalance, a duplicate",
        ListenersContract.DEADLINE, () -> outcomes.duplicates.contains(id), found -> found);
    ListenersApp.Effects effects = context.getBean(ListenersApp.Effects.class);

    assertThat(effects.calls(id)).as("the method ran once").isEqualTo(1);
    assertThat(effects.rows(id)).isEqualTo(1);
    assertThat(outcomes.processed).isEmpty(); // the stuck delivery reports once it returns
    ListenersApp.Effects.release.countDown();
    Eventually.await("the stuck delivery returned", ListenersContract.DEADLINE,
        () -> outcomes.processed.contains(id), found -> found);
    Eventually.await("the offsets committed to the end", ListenersContract.DEADLINE,
        () -> KafkaListenersContract.committed(topic, topic), c -> c == KafkaListenersContract.endOffsets(topic));
    assertThat(effects.rows(id)).isEqualTo(1);
    assertThat(TestPostgres.eventsWithSeveralEffects(tables + "_fx")).isZero();
  }
}
