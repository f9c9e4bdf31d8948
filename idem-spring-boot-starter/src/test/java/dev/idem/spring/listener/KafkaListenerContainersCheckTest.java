package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.test.kafka.KafkaBroker;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** On the in-JVM Kafka broker: a listener whose dead-letter topic does not exist fails the start, naming it. */
class KafkaListenerContainersCheckTest {
  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String tables = "listeners_" + suffix;
  private final String topic = "listeners-" + suffix;

  @AfterEach
  void tearDown() throws Exception {
    try (Admin admin = KafkaBroker.admin()) {
      admin.deleteTopics(List.of(topic)).all().get(30, TimeUnit.SECONDS);
    } finally {
      PostgresKafkaListenersTest.dropTables(tables);
    }
  }

  @Test
  void aMissingDeadLetterTopicFailsTheStartWithItsName() {
    KafkaBroker.createTopic(topic, 1); // and no <topic>.dlt

    Throwable failure = catchThrowable(() -> ListenersContract.run(ListenersContract.arguments(tables,
        PostgresKafkaListenersTest.postgres(), KafkaListenersContract.kafkaProperties(topic))).close());

    assertThat(ListenerStartupErrorsTest.messages(failure)).contains("the Kafka dead-letter topics [" + topic
        + ".dlt] do not exist (the first serves @IdempotentListener on " + ListenersApp.KafkaPayments.class.getName()
        + ".on)");
  }
}
