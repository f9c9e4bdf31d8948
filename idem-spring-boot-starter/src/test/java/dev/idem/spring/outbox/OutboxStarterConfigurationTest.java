package dev.idem.spring.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.webhook.WebhookReceiverServlet;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/** Which beans the outbox starter creates, and how it refuses bad configuration at startup. */
class OutboxStarterConfigurationTest {

  /** An application with one route and nothing else of its own. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class RouteApp {
    @Bean
    OutboxRoute route() {
      return OutboxRoute.of("recording", new RecordingTransport());
    }
  }

  /** An application without routes: it only consumes. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class ConsumerApp {}

  /** An application that builds its own outbox. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class OwnOutboxApp {
    @Bean
    Outbox myOutbox(DataSource dataSource) {
      return Outbox.builder(JdbcOutboxStore.builder(dataSource).table("my_outbox").createSchemaIfMissing(true)
          .build()).build();
    }

    @Bean
    OutboxRoute route() {
      return OutboxRoute.of("recording", new RecordingTransport());
    }
  }

  /** An application with a webhook receiver. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class ReceiverApp {
    @Bean
    ServletRegistrationBean<WebhookReceiverServlet> receiver(WebhookReceivers receivers) {
      return receivers.register("provider", (c, m) -> "ok");
    }
  }

  private static ConfigurableApplicationContext run(Class<?> app, String... properties) {
    List<String> args = new ArrayList<>(List.of(
        "--spring.datasource.url=jdbc:h2:mem:outbox-config-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1"));
    args.addAll(List.of(properties));
    return new SpringApplicationBuilder(app).web(WebApplicationType.NONE).run(args.toArray(String[]::new));
  }

  @Test
  void routeBeanGetsAnOutboxAnInboxARunningRelayAndMeters() {
    try (ConfigurableApplicationContext context = run(RouteApp.class, "--idem.outbox.initialize-schema=true")) {
      assertThat(context.getBeansOfType(Outbox.class)).hasSize(1);
      assertThat(context.getBeansOfType(Inbox.class)).hasSize(1);
      assertThat(context.getBean(OutboxRelayLifecycle.class).isRunning()).isTrue();
      assertThat(context.getBean(OutboxPurge.class).isRunning()).isTrue();
    }
  }

  @Test
  void relayStopsWithTheContext() {
    ConfigurableApplicationContext context = run(RouteApp.class, "--idem.outbox.initialize-schema=true");
    OutboxRelayLifecycle relay = context.getBean(OutboxRelayLifecycle.class);
    dev.idem.outbox.OutboxRelay running = relay.relay().orElseThrow();

    context.close();

    assertThat(relay.isRunning()).isFalse();
    assertThat(running.isRunning()).isFalse();
  }

  @Test
  void applicationWithoutRoutesGetsNoRelay() {
    try (ConfigurableApplicationContext context = run(ConsumerApp.class, "--idem.outbox.initialize-schema=true")) {
      assertThat(context.getBeansOfType(OutboxRelayLifecycle.class)).isEmpty();
      assertThat(context.getBeansOfType(Inbox.class)).hasSize(1);
    }
  }

  @Test
  void relayDisabledByPropertyIsNotCreated() {
    try (ConfigurableApplicationContext context = run(RouteApp.class, "--idem.outbox.initialize-schema=true",
        "--idem.outbox.relay.enabled=false")) {
      assertThat(context.getBeansOfType(OutboxRelayLifecycle.class)).isEmpty();
      assertThat(context.getBeansOfType(Outbox.class)).hasSize(1);
    }
  }

  @Test
  void outboxDisabledByPropertyCreatesNothing() {
    try (ConfigurableApplicationContext context = run(RouteApp.class, "--idem.outbox.enabled=false")) {
      assertThat(context.getBeansOfType(Outbox.class)).isEmpty();
      assertThat(context.getBeansOfType(Inbox.class)).isEmpty();
      assertThat(context.getBeansOfType(OutboxRelayLifecycle.class)).isEmpty();
    }
  }

  @Test
  void applicationsOwnOutboxWinsAndTheRelayUsesIt() {
    try (ConfigurableApplicationContext context = run(OwnOutboxApp.class)) {
      Outbox own = context.getBean("myOutbox", Outbox.class);

      assertThat(context.getBeansOfType(Outbox.class)).containsOnlyKeys("myOutbox");
      assertThat(own.store().name()).isEqualTo("my_outbox");
      assertThat(context.getBean(OutboxRelayLifecycle.class).isRunning()).isTrue();
    }
  }

  @Test
  void badBatchSizeFailsStartupNamingTheProperty() {
    assertThatThrownBy(() -> run(RouteApp.class, "--idem.outbox.relay.batch-size=0").close())
        .hasStackTraceContaining("idem.outbox.relay.batch-size must be 1..5000, got 0");
  }

  @Test
  void badDurationsAndTablesFailStartupNamingTheProperty() {
    assertThatThrownBy(() -> run(RouteApp.class, "--idem.outbox.relay.lease=10ms").close())
        .hasStackTraceContaining("idem.outbox.relay.lease must be 100ms to 1h, got PT0.01S");
    assertThatThrownBy(() -> run(ConsumerApp.class, "--idem.outbox.inbox-table=inbox;drop").close())
        .hasStackTraceContaining("idem.outbox.inbox-table must be an SQL identifier");
    assertThatThrownBy(() -> run(ConsumerApp.class, "--idem.outbox.purge.inbox-retention=0s").close())
        .hasStackTraceContaining("idem.outbox.purge.inbox-retention must be a positive duration");
  }

  @Test
  void badWebhookSecretFailsStartupNamingThePropertyWithoutRepeatingTheValue() {
    String notASecret = "whsec_c2hvcnQ=";

    assertThatThrownBy(() -> run(ReceiverApp.class, "--idem.outbox.webhooks.receivers.provider.path=/webhooks/p",
        "--idem.outbox.webhooks.receivers.provider.secrets=" + WebhookSecret.generate().reveal() + "," + notASecret)
        .close())
        .hasStackTraceContaining("idem.outbox.webhooks.receivers.provider.secrets[1] is not a webhook secret")
        .satisfies(e -> assertThat(stackTrace(e)).doesNotContain("c2hvcnQ"));
  }

  @Test
  void unconfiguredWebhookReceiverFailsStartupNamingTheProperties() {
    assertThatThrownBy(() -> run(ReceiverApp.class).close())
        .hasStackTraceContaining("idem.outbox.webhooks.receivers.provider.path");
  }

  private static String stackTrace(Throwable e) {
    java.io.StringWriter out = new java.io.StringWriter();
    e.printStackTrace(new java.io.PrintWriter(out));
    return out.toString();
  }
}
