package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.GetResponse;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The listener contract with a {@code @RabbitListener} on PostgreSQL, with {@code idem.listeners.rabbit.*}: what the
 * method gives up on is republished to the dead-letter exchange with its attempt history, then acknowledged; a dead
 * letter RabbitMQ does not take leaves the message on its queue.
 */
class PostgresRabbitDeadLetterExchangeTest extends RabbitListenersContract {
  @Override
  boolean republishes() {
    return true;
  }

  @Override
  List<String> database() {
    return PostgresKafkaListenersTest.postgres();
  }

  @Override
  void dropTables() {
    PostgresKafkaListenersTest.dropTables(tables);
  }

  @Test
  void aDeadLetterExchangeThatDoesNotExistLeavesThePoisonMessageOnItsQueueAndTheMethodIsNotRunAgain()
      throws Exception {
    deadLetterExchange = queue + "-missing";
    start();
    String id = newId();

    publish(id, "poison");
    ListenersApp.Outcomes outcomes = outcomes();
    ListenersApp.Effects effects = effects();
    awaitThat("the dead letter failing twice", () -> outcomes.deadLetterFailed.size() >= 2);
    context.close(); // the message in hand goes back to the queue
    context = null;

    assertThat(outcomes.deadLetterFailed).containsOnly(id);
    assertThat(effects.calls(id)).as("calls: none after the message was given up on").isEqualTo(3);
    assertThat(messageCount(idemDeadLetters)).isZero();
    assertThat(messageCount(deadLetters)).isZero();
    assertThat(messageCount(queue)).isEqualTo(1);
    GetResponse back = admin.basicGet(queue, true);
    assertThat(back.getProps().getMessageId()).isEqualTo(id);
  }

  @Test
  void aRoutingKeyWithoutExchangeOrABlankExchangeStopsTheStart() {
    List<String> database = database();
    assertThatThrownBy(() -> run(arguments(tables, database, rabbitProperties(queue),
        "idem.listeners.rabbit.dead-letter-routing-key=poisoned")))
        .hasStackTraceContaining("idem.listeners.rabbit.dead-letter-routing-key is set but"
            + " idem.listeners.rabbit.dead-letter-exchange is not");
    assertThatThrownBy(() -> run(arguments(tables, database, rabbitProperties(queue),
        "idem.listeners.rabbit.dead-letter-exchange=")))
        .hasStackTraceContaining("idem.listeners.rabbit.dead-letter-exchange must be a name of 1 to 255 UTF-8 bytes");
  }
}
