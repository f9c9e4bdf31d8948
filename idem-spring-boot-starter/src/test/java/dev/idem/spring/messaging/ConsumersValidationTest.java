package dev.idem.spring.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.nats.NatsJetStreamTransport;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Bad {@code idem.consumers.*} settings stop the application's start with a message that names the property; no
 * broker is reached (each bad setting is found before a consumer connects). On H2.
 */
class ConsumersValidationTest {

  private static ConfigurableApplicationContext start(String... properties) {
    List<String> args = new ArrayList<>(List.of("--spring.main.web-application-type=none",
        "--spring.datasource.url=jdbc:h2:mem:consumers-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.outbox.initialize-schema=true", "--idem.consumers.rabbitmq.uri=amqp://guest:guest@127.0.0.1:1"));
    for (String p : properties) {
      args.add("--" + p);
    }
    return new SpringApplicationBuilder(ConsumersApp.class).run(args.toArray(String[]::new));
  }

  /** The messages of {@code e} and its causes, joined: Spring wraps what the auto-configuration throws. */
  private static String messages(Throwable e) {
    StringBuilder all = new StringBuilder();
    for (Throwable c = e; c != null; c = c.getCause()) {
      all.append(c.getMessage()).append('\n');
    }
    return all.toString();
  }

  private static void refused(String expected, String... properties) {
    assertThatThrownBy(() -> start(properties).close())
        .satisfies(e -> assertThat(messages(e)).contains(expected));
  }

  @Test
  void withoutConsumersTheApplicationStartsAndRunsNone() {
    try (ConfigurableApplicationContext context = start()) {
      assertThat(context.getBeansOfType(InboxConsumerLifecycle.class)).isEmpty();
    }
  }

  @Test
  void anUnknownBrokerIsNamed() {
    refused("idem.consumers.orders.sqs.queue: not a setting of idem.consumers.orders",
        "idem.consumers.orders.handler=recordEffect", "idem.consumers.orders.sqs.queue=orders");
  }

  @Test
  void anUnknownSettingOfABrokerIsNamed() {
    refused("idem.consumers.orders.rabbitmq.prefetchh: not a setting of idem.consumers.orders",
        "idem.consumers.orders.handler=recordEffect", "idem.consumers.orders.rabbitmq.queue=orders",
        "idem.consumers.orders.rabbitmq.prefetchh=5");
  }

  @Test
  void aConsumerWithoutABrokerIsNamed() {
    refused("idem.consumers.orders names no broker", "idem.consumers.orders.handler=recordEffect");
  }

  @Test
  void twoBrokersOnOneConsumerAreRefused() {
    refused("idem.consumers.orders sets idem.consumers.orders.rabbitmq.* and idem.consumers.orders.kafka.*",
        "idem.consumers.orders.handler=recordEffect", "idem.consumers.orders.rabbitmq.queue=orders",
        "idem.consumers.orders.kafka.topic=orders");
  }

  @Test
  void aMissingQueueSubjectOrTopicIsNamed() {
    refused("idem.consumers.orders.rabbitmq.queue is required",
        "idem.consumers.orders.handler=recordEffect", "idem.consumers.orders.rabbitmq.prefetch=5");
    refused("idem.consumers.orders.nats.subject is required",
        "idem.consumers.orders.handler=recordEffect", "idem.consumers.orders.nats.stream=ORDERS");
    refused("idem.consumers.orders.kafka.topic is required",
        "idem.consumers.orders.handler=recordEffect", "idem.consumers.orders.kafka.batch-size=5");
  }

  @Test
  void theHandlerMustBeNamedExistAndBeAnInboxHandler() {
    refused("idem.consumers.orders.handler is required", "idem.consumers.orders.rabbitmq.queue=orders");
    refused("idem.consumers.orders.handler: there is no bean named 'shipOrder'",
        "idem.consumers.orders.handler=shipOrder", "idem.consumers.orders.rabbitmq.queue=orders");
    refused("idem.consumers.orders.handler: bean 'notAHandler' is a java.lang.String, not an InboxHandler",
        "idem.consumers.orders.handler=notAHandler", "idem.consumers.orders.rabbitmq.queue=orders");
  }

  @Test
  void aValueTheBuilderRefusesIsNamedWithTheProperty() {
    refused("idem.consumers.orders.rabbitmq.prefetch: prefetch must be 1 to 65535, got 0",
        "idem.consumers.orders.handler=recordEffect", "idem.consumers.orders.rabbitmq.queue=orders",
        "idem.consumers.orders.rabbitmq.prefetch=0");
    refused("idem.consumers.billing.kafka.max-attempts: maxAttempts must be 1 to 100, got 0",
        "idem.consumers.kafka.bootstrap-servers=127.0.0.1:1", "idem.consumers.billing.handler=recordEffect",
        "idem.consumers.billing.kafka.topic=payments", "idem.consumers.billing.kafka.max-attempts=0");
    refused("idem.consumers.billing.kafka.properties: ",
        "idem.consumers.kafka.bootstrap-servers=127.0.0.1:1", "idem.consumers.billing.handler=recordEffect",
        "idem.consumers.billing.kafka.topic=payments",
        "idem.consumers.billing.kafka.properties.enable.auto.commit=true");
  }

  @Test
  void aBrokerWithoutAConnectionIsNamed() {
    refused("set idem.consumers.kafka.bootstrap-servers",
        "idem.consumers.billing.handler=recordEffect", "idem.consumers.billing.kafka.topic=payments");
    refused("set idem.consumers.nats.url or define an io.nats.client.Connection bean",
        "idem.consumers.ledger.handler=recordEffect", "idem.consumers.ledger.nats.stream=LEDGER",
        "idem.consumers.ledger.nats.subject=ledger.>");
  }

  @Test
  void aBadRabbitMqUriIsNamedWithoutItsPassword() {
    assertThatThrownBy(() -> start("idem.consumers.rabbitmq.uri=http://guest:s3cret@127.0.0.1",
        "idem.consumers.orders.handler=recordEffect", "idem.consumers.orders.rabbitmq.queue=orders").close())
        .satisfies(e -> assertThat(messages(e)).contains("idem.consumers.rabbitmq.uri is not an AMQP URI")
            .doesNotContain("s3cret"));
  }

  @Test
  void anUnreachableNatsServerIsNamedWithoutItsPassword() {
    assertThatThrownBy(() -> start("idem.consumers.nats.url=nats://idem:s3cret@127.0.0.1:1",
        "idem.consumers.ledger.handler=recordEffect", "idem.consumers.ledger.nats.stream=LEDGER",
        "idem.consumers.ledger.nats.subject=ledger.>").close())
        .satisfies(e -> {
          StringWriter trace = new StringWriter();
          e.printStackTrace(new PrintWriter(trace));
          assertThat(messages(e)).contains("NATS is not reachable at idem.consumers.nats.url")
              .contains("nats://127.0.0.1:1");
          assertThat(trace.toString()).as("the whole trace, causes and suppressed included").doesNotContain("s3cret");
        });
  }

  @Test
  void userInformationIsTakenOutOfEveryUrlInAText() {
    assertThat(NatsJetStreamTransport.withoutUserInfo("Unable to connect to NATS servers: [nats://u:p@a:4222, tls://x@b:1]"))
        .isEqualTo("Unable to connect to NATS servers: [nats://a:4222, tls://b:1]");
    assertThat(NatsJetStreamTransport.withoutUserInfo(null)).isNull();
  }

  @Test
  void aConsumerNameOutsideTheAllowedCharactersIsRefused() {
    refused("a consumer's name must be 1 to 64 lowercase letters",
        "idem.consumers.order_events.handler=recordEffect", "idem.consumers.order_events.rabbitmq.queue=orders");
  }

  @Test
  void aDisabledConsumerIsCheckedButNotRun() {
    try (ConfigurableApplicationContext context = start("idem.consumers.orders.enabled=false",
        "idem.consumers.orders.handler=recordEffect", "idem.consumers.orders.rabbitmq.queue=orders")) {
      assertThat(context.getBeansOfType(InboxConsumerLifecycle.class)).isEmpty();
    }
    refused("idem.consumers.orders names no broker", "idem.consumers.orders.enabled=false",
        "idem.consumers.orders.handler=recordEffect");
  }
}
