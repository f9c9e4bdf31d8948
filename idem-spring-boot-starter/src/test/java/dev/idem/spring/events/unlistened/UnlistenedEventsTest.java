package dev.idem.spring.events.unlistened;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.Outbox;
import dev.idem.spring.events.Externalized;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * An application with {@code @Externalized} events whose listener cannot be created (two data sources, none
 * {@code @Primary}): the start stops, naming the condition, instead of publishing its events to Spring only, where
 * they would be written nowhere and nothing would throw. On PostgreSQL.
 */
class UnlistenedEventsTest {

  /** Found by the scan of this package. */
  @Externalized(value = "recording:shipments", type = "order.shipped")
  public record Shipped(String orderId) {}

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    DataSource ordersDataSource() {
      return postgres();
    }

    @Bean
    DataSource reportsDataSource() {
      return postgres();
    }

    @Bean
    Outbox outbox(@Qualifier("ordersDataSource") DataSource orders) {
      return Outbox.builder(JdbcOutboxStore.builder(orders).table("unl_obx_" + UUID.randomUUID().toString()
          .replace("-", "").substring(0, 10)).build()).build();
    }

    private static DataSource postgres() {
      return new DriverManagerDataSource(System.getProperty("idem.test.postgres.url",
          "jdbc:postgresql://127.0.0.1:5432/test"), System.getProperty("idem.test.postgres.user", "postgres"), "");
    }
  }

  private static ConfigurableApplicationContext run(String... properties) {
    List<String> args = new ArrayList<>(List.of("--spring.main.web-application-type=none"));
    args.addAll(List.of(properties));
    return new SpringApplicationBuilder(App.class).run(args.toArray(String[]::new));
  }

  @Test
  void externalizedEventsWithoutTheirListenerStopTheStartNamingTheCondition() {
    assertThatThrownBy(() -> run().close()).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("no ExternalizedEvents listener was created")
        .hasMessageContaining("@ConditionalOnSingleCandidate")
        .hasMessageContaining("ordersDataSource")
        .hasMessageContaining(Shipped.class.getName())
        .hasMessageContaining("idem.events.enabled=false");
  }

  @Test
  void aConfiguredRouteWithoutItsListenerStopsTheStartToo() {
    assertThatThrownBy(() -> run("--idem.events.scan=false",
        "--idem.events.routes[com.example.Refunded]=recording:refunds").close())
        .hasMessageContaining("no ExternalizedEvents listener was created")
        .hasMessageContaining("com.example.Refunded");
  }

  @Test
  void withoutEventsToWriteOrWithEventsTurnedOffTheApplicationStarts() {
    run("--idem.events.scan=false").close();
    run("--idem.events.enabled=false").close();
  }
}
