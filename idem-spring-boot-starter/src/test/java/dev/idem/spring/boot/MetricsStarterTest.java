package dev.idem.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Idem;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.spring.internal.InProgressGauges;
import dev.idem.spring.internal.MicrometerListener;
import dev.idem.spring.outbox.OutboxMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/**
 * The meters' beans in applications of several shapes: the gauges' reading threads end with the context, and two
 * idempotency stores do not stop an application from starting.
 */
class MetricsStarterTest {

  /** An application with Idem on its one DataSource and nothing else of its own. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class PlainApp {}

  /** Two stores, none primary, and the application's own Idem on one of them. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class TwoStoresApp {
    @Bean
    JdbcIdempotencyStore paymentsStore(DataSource dataSource) {
      return JdbcIdempotencyStore.builder(dataSource).name("payments").table("idem_payments")
          .createSchemaIfMissing(true).build();
    }

    @Bean
    JdbcIdempotencyStore refundsStore(DataSource dataSource) {
      return JdbcIdempotencyStore.builder(dataSource).name("refunds").table("idem_refunds")
          .createSchemaIfMissing(true).build();
    }

    @Bean
    Idem idem(@Qualifier("paymentsStore") JdbcIdempotencyStore store) {
      return Idem.builder().name("payments").store(store).build();
    }
  }

  /** Two stores, one of them primary; Idem is auto-configured on the primary one. */
  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class PrimaryStoreApp {
    @Bean
    @Primary
    JdbcIdempotencyStore paymentsStore(DataSource dataSource) {
      return JdbcIdempotencyStore.builder(dataSource).name("payments").table("idem_payments")
          .createSchemaIfMissing(true).build();
    }

    @Bean
    JdbcIdempotencyStore refundsStore(DataSource dataSource) {
      return JdbcIdempotencyStore.builder(dataSource).name("refunds").table("idem_refunds")
          .createSchemaIfMissing(true).build();
    }
  }

  private static ConfigurableApplicationContext run(Class<?> app, WebApplicationType web, String... more) {
    List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
        "--spring.datasource.url=jdbc:h2:mem:metrics-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--idem.store.initialize-schema=true", "--idem.outbox.initialize-schema=true",
        "--spring.main.banner-mode=off"));
    args.addAll(List.of(more));
    return new SpringApplicationBuilder(app).web(web).run(args.toArray(String[]::new));
  }

  private static Thread thread(String name) {
    List<Thread> found = Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).toList();
    assertThat(found).as("threads named " + name).hasSize(1);
    return found.get(0);
  }

  @Test
  void closingTheContextEndsTheGaugesReadingThreads() throws Exception {
    String name = "threads-" + UUID.randomUUID().toString().substring(0, 8);
    ConfigurableApplicationContext context = run(PlainApp.class, WebApplicationType.NONE, "--idem.name=" + name);
    MeterRegistry registry = context.getBean(MeterRegistry.class);
    // a scrape starts each bean's own reading thread
    registry.get(InProgressGauges.IN_PROGRESS).tag("instance", name).gauge().value();
    registry.get("idem.outbox.backlog").tag("instance", name).gauge().value();
    Thread records = thread("idem-record-metrics-" + name);
    Thread outbox = thread("idem-outbox-metrics-" + name);

    context.close();
    records.join(Duration.ofSeconds(30).toMillis());
    outbox.join(Duration.ofSeconds(30).toMillis());

    assertThat(records.isDaemon()).isTrue();
    assertThat(records.isAlive()).as("the in-progress gauges' thread after the context closed").isFalse();
    assertThat(outbox.isAlive()).as("the outbox gauges' thread after the context closed").isFalse();
  }

  @Test
  void twoStoresWithoutAPrimaryOneStartWithoutInProgressGauges() {
    try (ConfigurableApplicationContext context = run(TwoStoresApp.class, WebApplicationType.SERVLET,
        "--management.endpoints.web.exposure.include=health,idempotency")) {
      assertThat(context.getBeansOfType(JdbcIdempotencyStore.class)).hasSize(2);
      assertThat(context.getBeansOfType(InProgressGauges.class)).isEmpty();
      assertThat(context.getBeansOfType(IdempotencyEndpoint.class)).isEmpty();
      assertThat(context.getBeansOfType(MicrometerListener.class)).hasSize(1);
      assertThat(context.getBeansOfType(OutboxMetrics.class)).hasSize(1);
    }
  }

  @Test
  void twoStoresOfWhichOneIsPrimaryGetGaugesAndTheEndpointOnThePrimaryOne() {
    try (ConfigurableApplicationContext context = run(PrimaryStoreApp.class, WebApplicationType.SERVLET,
        "--idem.name=primary", "--management.endpoints.web.exposure.include=health,idempotency")) {
      assertThat(context.getBean(Idem.class).store()).isSameAs(context.getBean("paymentsStore"));
      assertThat(context.getBeansOfType(InProgressGauges.class)).hasSize(1);
      assertThat(context.getBeansOfType(IdempotencyEndpoint.class)).hasSize(1);
      assertThat(context.getBean(MeterRegistry.class).find(InProgressGauges.IN_PROGRESS).tag("instance", "primary")
          .gauge()).isNotNull();
    }
  }
}
