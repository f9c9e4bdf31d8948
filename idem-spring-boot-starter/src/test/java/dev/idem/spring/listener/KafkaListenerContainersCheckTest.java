package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.test.kafka.KafkaBroker;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;

/**
 * On the in-JVM Kafka broker: a listener whose dead-letter topic does not exist fails the start, naming it, whether
 * its container subscribes to the topic or is assigned a partition of it, and whether it runs in Kafka transactions
 * (the starter's after-rollback processor) or not (its error handler).
 */
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

  @Test
  void aMissingDeadLetterTopicOfATransactionalContainerFailsTheStartWithItsName() {
    KafkaBroker.createTopic(topic, 1);
    List<String> broker = new ArrayList<>(KafkaListenersContract.kafkaProperties(topic));
    broker.add("spring.kafka.producer.transaction-id-prefix=idem-check-" + suffix + "-");

    Throwable failure = catchThrowable(() -> ListenersContract.run(ListenersContract.arguments(tables,
        PostgresKafkaListenersTest.postgres(), broker)).close());

    assertThat(ListenerStartupErrorsTest.messages(failure)).contains("the Kafka dead-letter topics [" + topic
        + ".dlt] do not exist (the first serves @IdempotentListener on " + ListenersApp.KafkaPayments.class.getName()
        + ".on)");
  }

  @Test
  void aMissingDeadLetterTopicOfAnAssignedPartitionFailsTheStartWithItsName() {
    KafkaBroker.createTopic(topic, 1);
    List<String> broker = List.of("spring.kafka.bootstrap-servers=" + KafkaBroker.bootstrapServers(),
        "listeners.kafka.partition-topic=" + topic);

    Throwable failure = catchThrowable(() -> ListenersContract.run(ListenersContract.arguments(tables,
        PostgresKafkaListenersTest.postgres(), broker)).close());

    assertThat(ListenerStartupErrorsTest.messages(failure)).contains("the Kafka dead-letter topics [" + topic
        + ".dlt] do not exist (the first serves @IdempotentListener on "
        + ListenersApp.KafkaPartitionPayments.class.getName() + ".on)");
  }

  @Test
  void anAssignedPartitionWhoseDeadLetterTopicExistsStarts() throws Exception {
    KafkaBroker.createTopic(topic, 1);
    KafkaBroker.createTopic(topic + ".dlt", 1);
    List<String> broker = List.of("spring.kafka.bootstrap-servers=" + KafkaBroker.bootstrapServers(),
        "listeners.kafka.partition-topic=" + topic);
    try {
      try (ConfigurableApplicationContext started = ListenersContract.run(ListenersContract.arguments(tables,
          PostgresKafkaListenersTest.postgres(), broker))) {
        assertThat(started.getBean(KafkaListenerEndpointRegistry.class).getListenerContainers())
            .singleElement().satisfies(c -> assertThat(c.isRunning()).isTrue());
      }
    } finally {
      try (Admin admin = KafkaBroker.admin()) {
        admin.deleteTopics(List.of(topic + ".dlt")).all().get(30, TimeUnit.SECONDS);
      }
    }
  }
}
