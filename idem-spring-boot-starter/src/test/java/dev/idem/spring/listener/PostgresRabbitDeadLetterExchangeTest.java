package dev.idem.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
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
  void aDeadLetterExchangeThatDoesNotExistStopsTheStartWithTheExchangeNamed() {
    deadLetterExchange = queue + "-missing";

    assertThatThrownBy(this::start).hasStackTraceContaining("idem.listeners.rabbit.dead-letter-exchange: the"
        + " dead-letter exchange '" + queue + "-missing' cannot be used").hasStackTraceContaining("NOT_FOUND");
  }

  @Test
  void aDeadLetterExchangeDeletedAfterTheStartRequeuesThePoisonMessageThenRejectsItToTheQueuesOwn()
      throws Exception {
    deadLetterExchange = queue + "-gone";
    try (Connection c = connect()) {
      Channel channel = c.createChannel();
      channel.exchangeDeclare(deadLetterExchange, BuiltinExchangeType.DIRECT, false);
    }
    start("idem.listeners.rabbit.dead-letter-attempts=2");
    admin.exchangeDelete(deadLetterExchange);
    String id = newId();

    publish(id, "poison");
    ListenersApp.Outcomes outcomes = outcomes();
    ListenersApp.Effects effects = effects();
    awaitThat("the message rejected to the queue's own dead-letter queue", () -> messageCount(deadLetters) == 1);
    awaitThat("the message given up on reported", () -> outcomes.deadLettered.contains(id));

    assertThat(outcomes.deadLetterFailed).containsExactly(id, id);
    assertThat(outcomes.deadLettered).containsExactly(id);
    assertThat(effects.calls(id)).as("calls: none after the message was given up on").isEqualTo(3);
    assertThat(messageCount(idemDeadLetters)).isZero();
    assertThat(messageCount(queue)).isZero();
    GetResponse dead = admin.basicGet(deadLetters, true);
    assertThat(dead.getProps().getMessageId()).isEqualTo(id);
    assertThat(dead.getProps().getHeaders()).containsKey("x-death");
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
    assertThatThrownBy(() -> run(arguments(tables, database, rabbitProperties(queue),
        "idem.listeners.rabbit.dead-letter-exchange=" + idemExchange, "idem.listeners.rabbit.dead-letter-attempts=0")))
        .hasStackTraceContaining("idem.listeners.rabbit.dead-letter-attempts must be 1 to 1000, got 0");
  }
}
