package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.AbstractMessageListenerContainer;
import org.springframework.kafka.listener.DefaultAfterRollbackProcessor;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.transaction.KafkaAwareTransactionManager;

/**
 * The listener contract with a {@code @KafkaListener} on PostgreSQL in a container with a Kafka transaction manager
 * ({@code spring.kafka.producer.transaction-id-prefix}): a failed record then goes to the container's after-rollback
 * processor, not to its error handler, and the starter's processor must dead-letter what the listener gave up on and
 * deliver again, without end, what it handed back. Spring's default processor skips a record after ten tries.
 */
class PostgresTransactionalKafkaListenersTest extends PostgresKafkaListenersTest {

  @Override
  List<String> broker() {
    List<String> properties = new ArrayList<>(super.broker());
    properties.add("spring.kafka.producer.transaction-id-prefix=idem-listeners-" + suffix + "-");
    properties.add("spring.kafka.consumer.isolation-level=read_committed");
    return properties;
  }

  @Test
  void theContainerRunsInAKafkaTransactionWithTheStartersAfterRollbackProcessor() throws Exception {
    start();

    MessageListenerContainer container = context.getBean(KafkaListenerEndpointRegistry.class)
        .getListenerContainers().iterator().next();
    assertThat(container.getContainerProperties().getKafkaAwareTransactionManager())
        .isInstanceOf(KafkaAwareTransactionManager.class);
    assertThat(((AbstractMessageListenerContainer<?, ?>) container).getAfterRollbackProcessor())
        .isInstanceOf(DefaultAfterRollbackProcessor.class)
        .isSameAs(context.getBean("idemListenerAfterRollbackProcessor"));
  }

  /**
   * Every try during the outage hands the record back through a rolled-back Kafka transaction ({@code max-hold=0s}):
   * more than the ten tries after which Spring's default after-rollback processor skips a record, and then each
   * message takes effect once.
   */
  @Test
  void handedBackMoreOftenThanSpringsDefaultTriesDuringAnOutageEachMessageStillTakesEffectOnce() throws Exception {
    whileTheDatabaseIsAwayTheListenerPausesAndGivesNothingUp(jdbcUrl -> url = jdbcUrl, 12,
        "spring.datasource.hikari.connection-timeout=250", "idem.listeners.max-hold=0s");
  }
}
