package dev.idem.spring.events.twodatasources;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.spi.OutboxStore;
import dev.idem.spring.events.ExternalizedEvents;
import dev.idem.spring.events.app.EventsApp.Recorder;
import dev.idem.spring.outbox.OutboxRoute;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Transactional;

/**
 * Domain events in an application with two data sources, the outbox on the primary one (a Hikari pool whose
 * connections do not auto-commit): an event published in a transaction of the other data source's manager holds no
 * connection of the outbox's, so it follows {@code idem.events.outside-transaction} rather than being written on a
 * pooled connection outside any transaction (whose insert the pool would roll back: the event lost while the
 * business write commits). On H2.
 */
class TwoDataSourcesEventsTest {

  /** Routed by idem.events.routes (the scan is off). */
  public record Shipped(String orderId) {}

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    @Primary
    HikariDataSource dataSource() {
      HikariDataSource pool = new HikariDataSource();
      pool.setJdbcUrl("jdbc:h2:mem:events-primary-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
      pool.setAutoCommit(false);
      return pool;
    }

    @Bean
    DataSource secondDataSource() {
      return new DriverManagerDataSource("jdbc:h2:mem:events-second-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    }

    @Bean
    @Primary
    PlatformTransactionManager transactionManager(DataSource dataSource) {
      return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    PlatformTransactionManager secondTransactions(@Qualifier("secondDataSource") DataSource second) {
      return new DataSourceTransactionManager(second);
    }

    @Bean
    Recorder recorder() {
      return new Recorder();
    }

    @Bean
    OutboxRoute recordingRoute(Recorder recorder) {
      return OutboxRoute.of("recording", recorder);
    }

    @Bean
    Shipping shipping(@Qualifier("secondDataSource") DataSource second, ApplicationEventPublisher publisher) {
      JdbcTemplate jdbc = new JdbcTemplate(second);
      jdbc.execute("CREATE TABLE IF NOT EXISTS shipment (order_id VARCHAR(64) PRIMARY KEY)");
      return new Shipping(jdbc, publisher);
    }
  }

  /** Writes shipments to the second data source. */
  public static class Shipping {
    private final JdbcTemplate second;
    private final ApplicationEventPublisher publisher;

    Shipping(JdbcTemplate second, ApplicationEventPublisher publisher) {
      this.second = second;
      this.publisher = publisher;
    }

    /** In a transaction of the second data source, which the outbox is not on. */
    @Transactional("secondTransactions")
    public void shipOnTheSecond(String orderId) {
      second.update("INSERT INTO shipment (order_id) VALUES (?)", orderId);
      publisher.publishEvent(new Shipped(orderId));
    }

    /** In a transaction of the outbox's data source. */
    @Transactional
    public void shipOnThePrimary(String orderId) {
      publisher.publishEvent(new Shipped(orderId));
    }

    public boolean shipped(String orderId) {
      return second.queryForObject("SELECT COUNT(*) FROM shipment WHERE order_id = ?", Integer.class, orderId) > 0;
    }
  }

  /** An outbox on the second data source, while events would be written through the primary one. */
  @Configuration
  static class OutboxOnTheSecond {
    @Bean
    OutboxStore outboxStore(@Qualifier("secondDataSource") DataSource second) {
      return JdbcOutboxStore.builder(second).createSchemaIfMissing(true).build();
    }
  }

  private static ConfigurableApplicationContext run(Class<?>[] sources, String... properties) {
    List<String> args = new ArrayList<>(List.of("--spring.main.web-application-type=none",
        "--idem.outbox.initialize-schema=true", "--idem.events.scan=false",
        "--idem.events.routes[" + Shipped.class.getName() + "]=recording:shipments"));
    for (String p : properties) {
      args.add("--" + p);
    }
    return new SpringApplicationBuilder(sources).run(args.toArray(String[]::new));
  }

  @Test
  void anEventPublishedInAnotherDataSourcesTransactionIsRefusedAndItsTransactionRollsBack() throws Exception {
    try (ConfigurableApplicationContext context = run(new Class<?>[] {App.class})) {
      Shipping shipping = context.getBean(Shipping.class);
      CountDownLatch onThePrimary = context.getBean(Recorder.class).expect("o-primary");

      assertThatThrownBy(() -> shipping.shipOnTheSecond("o-second")).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("was published in a Spring transaction that holds no connection of the outbox's"
              + " DataSource");
      shipping.shipOnThePrimary("o-primary");

      assertThat(shipping.shipped("o-second")).as("the business write rolled back with the refusal").isFalse();
      assertThat(onThePrimary.await(20, TimeUnit.SECONDS)).as("written in the outbox DataSource's transaction")
          .isTrue();
      assertThat(context.getBean(Recorder.class).sent).noneMatch(m -> m.payload().contains("o-second"));
    }
  }

  @Test
  void withOwnTransactionsTheEventIsWrittenInATransactionOfItsOwn() throws Exception {
    try (ConfigurableApplicationContext context = run(new Class<?>[] {App.class},
        "idem.events.outside-transaction=own-transaction")) {
      Shipping shipping = context.getBean(Shipping.class);
      CountDownLatch arrived = context.getBean(Recorder.class).expect("o-own");

      shipping.shipOnTheSecond("o-own");

      assertThat(shipping.shipped("o-own")).isTrue();
      assertThat(arrived.await(20, TimeUnit.SECONDS)).as("written, committed and relayed").isTrue();
    }
  }

  @Test
  void anOutboxOnAnotherDataSourceThanTheEventsStopsTheStart() {
    assertThatThrownBy(() -> run(new Class<?>[] {App.class, OutboxOnTheSecond.class}).close())
        .hasStackTraceContaining("the Outbox bean's store takes its connections from")
        .hasStackTraceContaining("but domain events are written through the DataSource bean");
  }

  @Test
  void anOutboxOnAnotherDataSourceStartsWhenTheApplicationHasNoEventsToWrite() {
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class, OutboxOnTheSecond.class)
        .run("--spring.main.web-application-type=none", "--idem.outbox.initialize-schema=true",
            "--idem.events.scan=false")) {
      assertThat(context.getBean(ExternalizedEvents.class).events().routeOf(Shipped.class)).isEmpty();
    }
  }
}
