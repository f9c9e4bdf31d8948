package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.RepeatedTest;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A {@code @KafkaListener} killed with SIGKILL after its transaction committed and before the container committed the
 * record's offset: the effect is there once, and the record, delivered again to the restarted application, is a
 * duplicate that does not run the method; its offset is then committed.
 */
class PostgresKafkaListenerCrashTest {
  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String tables = "listeners_" + suffix;
  private final String topic = "listeners-crash-" + suffix;
  private ConfigurableApplicationContext context;

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (context != null) {
        context.close();
      }
      KafkaListenersContract.deleteTopics(topic);
    } finally {
      PostgresKafkaListenersTest.dropTables(tables);
    }
  }

  private List<String> arguments() {
    List<String> broker = new ArrayList<>(KafkaListenersContract.kafkaProperties(topic));
    // the killed member leaves the group after 6 s (the broker's least), not the default 45 s
    broker.add("spring.kafka.consumer.properties.session.timeout.ms=6000");
    broker.add("spring.kafka.consumer.properties.heartbeat.interval.ms=1000");
    broker.add("spring.kafka.listener.poll-timeout=200ms");
    return ListenersContract.arguments(tables, PostgresKafkaListenersTest.postgres(), broker);
  }

  @RepeatedTest(3)
  void aKillBetweenTheCommitAndTheOffsetCommitLeavesOneEffectAndTheRecordComesAgainAsADuplicate()
      throws Exception {
    KafkaListenersContract.createTopics(topic);
    TestPostgres.execute("CREATE TABLE " + tables + "_fx (event_id VARCHAR(200) NOT NULL)");
    String id = UUID.randomUUID().toString();
    String before = UUID.randomUUID().toString();
    try (KafkaProducer<String, String> producer = KafkaListenersContract.producer()) {
      producer.send(KafkaListenersContract.record(topic, before, "ok"));
      producer.send(KafkaListenersContract.record(topic, id, "crash"));
      producer.flush();
    }

    ListenerCrashChild.killAfterTheCommitOf(id, arguments());
    assertThat(TestPostgres.effectCount(tables + "_fx", id)).as("the effect committed before the kill").isEqualTo(1);
    assertThat(KafkaListenersContract.committed(topic, topic)).as("no offset committed past the record")
        .isLessThan(KafkaListenersContract.endOffsets(topic));

    context = ListenersContract.run(arguments());
    ListenersApp.Outcomes outcomes = context.getBean(ListenersApp.Outcomes.class);
    Eventually.await("the record delivered again, a duplicate", ListenersContract.DEADLINE,
        () -> outcomes.duplicates.contains(id), found -> found);
    Eventually.await("the offsets committed to the end", ListenersContract.DEADLINE,
        () -> KafkaListenersContract.committed(topic, topic), c -> c == KafkaListenersContract.endOffsets(topic));

    ListenersApp.Effects effects = context.getBean(ListenersApp.Effects.class);
    assertThat(effects.calls(id)).as("the duplicate did not run the method").isZero();
    assertThat(TestPostgres.effectCount(tables + "_fx", id)).isEqualTo(1);
    assertThat(TestPostgres.eventsWithSeveralEffects(tables + "_fx")).isZero();
    assertThat(outcomes.processed).doesNotContain(id);
  }
}
