package dev.idem.spring.listener;

import static dev.idem.spring.listener.ListenersContract.awaitThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import dev.idem.test.TcpProxy;
import dev.idem.test.TestPostgres;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A {@code @RabbitListener} whose container rejects failures without requeue
 * ({@code default-requeue-rejected=false}), on a queue without a dead-letter exchange: a message handed back during a
 * database outage is requeued all the same, never dropped; and a container that does not acknowledge in AUTO fails
 * the start.
 */
class PostgresRabbitHandBackTest {
  private final String suffix = Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffffL);
  private final String tables = "listeners_" + suffix;
  private final String queue = "listeners-" + suffix;
  private Connection rabbit;
  private Channel admin;
  private ConfigurableApplicationContext context;

  @BeforeEach
  void declareQueue() throws Exception {
    rabbit = RabbitListenersContract.connect();
    admin = rabbit.createChannel();
    admin.queueDeclare(queue, true, false, false, null); // no dead-letter exchange: a rejected message is dropped
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (context != null) {
        context.close();
      }
      admin.queueDelete(queue);
      rabbit.close();
    } finally {
      PostgresKafkaListenersTest.dropTables(tables);
    }
  }

  private List<String> arguments(String url, String... properties) {
    List<String> more = new ArrayList<>(List.of("spring.rabbitmq.listener.simple.default-requeue-rejected=false"));
    more.addAll(List.of(properties));
    return ListenersContract.arguments(tables, PostgresKafkaListenersTest.postgres(url),
        RabbitListenersContract.rabbitProperties(queue), more.toArray(String[]::new));
  }

  private double paused() {
    Counter c = context.getBean(MeterRegistry.class).find("idem.consumer.paused")
        .tag("consumer", ListenersContract.CONSUMER).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void aMessageHandedBackDuringADatabaseOutageIsRequeuedEvenWhenTheContainerRejectsWithoutRequeue()
      throws Exception {
    URI postgres = URI.create(TestPostgres.url().substring("jdbc:".length()));
    try (TcpProxy proxy = new TcpProxy(postgres.getHost(), postgres.getPort())) {
      context = ListenersContract.run(arguments("jdbc:postgresql://127.0.0.1:" + proxy.port() + postgres.getPath(),
          "spring.datasource.hikari.connection-timeout=250", "idem.listeners.max-hold=0s"));
      ListenersApp.Outcomes outcomes = context.getBean(ListenersApp.Outcomes.class);
      ListenersApp.Effects effects = context.getBean(ListenersApp.Effects.class);
      String before = UUID.randomUUID().toString();
      RabbitListenersContract.publish(admin, queue, before, "ok");
      awaitThat("the first message processed", () -> outcomes.processed.contains(before));

      proxy.stop();
      String during = UUID.randomUUID().toString();
      RabbitListenersContract.publish(admin, queue, during, "ok");
      awaitThat("the message handed back several times", () -> paused() >= 4);
      proxy.start();
      awaitThat("the message processed once the database was back", () -> outcomes.processed.contains(during));

      assertThat(effects.rows(during)).isEqualTo(1);
      assertThat(effects.calls(during)).isEqualTo(1);
      assertThat(outcomes.deadLettered).isEmpty();
      context.close();
      context = null;
      assertThat(admin.queueDeclarePassive(queue).getMessageCount()).isZero();
    }
  }

  @Test
  void aContainerThatDoesNotAcknowledgeInAutoModeFailsTheStart() {
    Throwable none = catchThrowable(() -> ListenersContract.run(arguments(TestPostgres.url(),
        "spring.rabbitmq.listener.simple.acknowledge-mode=none")).close());
    Throwable manual = catchThrowable(() -> ListenersContract.run(arguments(TestPostgres.url(),
        "spring.rabbitmq.listener.simple.acknowledge-mode=manual")).close());

    assertThat(ListenerStartupErrorsTest.messages(none)).contains("@IdempotentListener on "
        + ListenersApp.RabbitPayments.class.getName() + ".on is called by the RabbitMQ listener container '")
        .contains("whose acknowledge mode is NONE").contains("Use AUTO");
    assertThat(ListenerStartupErrorsTest.messages(manual)).contains("whose acknowledge mode is MANUAL");
  }
}
