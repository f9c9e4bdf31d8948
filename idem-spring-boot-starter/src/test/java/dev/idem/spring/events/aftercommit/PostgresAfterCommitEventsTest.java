package dev.idem.spring.events.aftercommit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.spring.events.Externalized;
import dev.idem.spring.events.app.EventsApp.Recorder;
import dev.idem.spring.outbox.OutboxRelayLifecycle;
import dev.idem.spring.outbox.OutboxRoute;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Externalized events published after their transaction committed or rolled back, from a
 * {@code @TransactionalEventListener(phase = AFTER_COMMIT)} or {@code AFTER_ROLLBACK}, or a synchronization's
 * {@code afterCommit}: Spring still reports the transaction active and its connection bound then, but the connection
 * has committed, so the event follows {@code idem.events.outside-transaction} instead of being written on it in an
 * implicit transaction that the pool (whose connections do not auto-commit) rolls back: lost silently. A
 * {@code REQUIRES_NEW} transaction of the listener writes it in that transaction. On PostgreSQL.
 */
class PostgresAfterCommitEventsTest {
  private static final long WAIT_SECONDS = 20;

  /** A plain application event: the order was written. */
  public record Placed(String orderId) {}

  /** A plain application event: placing the order failed and rolled back. */
  public record Failed(String orderId) {}

  /** A plain application event whose listener publishes in a transaction of its own. */
  public record PlacedAndReported(String orderId) {}

  @Externalized(value = "recording:notices", type = "order.notice")
  public record Notice(String orderId) {}

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    @Bean
    Recorder recorder() {
      return new Recorder();
    }

    @Bean
    OutboxRoute recordingRoute(Recorder recorder) {
      return OutboxRoute.of("recording", recorder);
    }

    @Bean
    Orders orders(JdbcTemplate jdbc, ApplicationEventPublisher publisher) {
      return new Orders(jdbc, publisher);
    }

    @Bean
    Notifier notifier(ApplicationEventPublisher publisher) {
      return new Notifier(publisher);
    }
  }

  /** The application's service. */
  public static class Orders {
    private final JdbcTemplate jdbc;
    private final ApplicationEventPublisher publisher;
    private volatile String table;

    Orders(JdbcTemplate jdbc, ApplicationEventPublisher publisher) {
      this.jdbc = jdbc;
      this.publisher = publisher;
    }

    @Transactional
    public void place(String orderId) {
      jdbc.update("INSERT INTO " + table + " (id) VALUES (?)", orderId);
      publisher.publishEvent(new Placed(orderId));
    }

    @Transactional
    public void placeAndReport(String orderId) {
      jdbc.update("INSERT INTO " + table + " (id) VALUES (?)", orderId);
      publisher.publishEvent(new PlacedAndReported(orderId));
    }

    @Transactional
    public void placeAndFail(String orderId) {
      jdbc.update("INSERT INTO " + table + " (id) VALUES (?)", orderId);
      publisher.publishEvent(new Failed(orderId));
      throw new IllegalStateException("placing the order failed");
    }

    /** Publishes the notice from a synchronization's afterCommit, which Spring runs before its afterCompletion. */
    @Transactional
    public void placeAndNotifyAfterCommit(String orderId) {
      jdbc.update("INSERT INTO " + table + " (id) VALUES (?)", orderId);
      TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
        @Override
        public void afterCommit() {
          publisher.publishEvent(new Notice(orderId));
        }
      });
    }

    /** Proxied (transactional): its fields are reached through methods. */
    public void useTable(String table) {
      this.table = table;
    }

    public boolean exists(String orderId) {
      return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE id = ?", Integer.class, orderId) > 0;
    }
  }

  /** Publishes a notice after the transaction; records what publishing threw, and throws it on. */
  public static class Notifier {
    private final ApplicationEventPublisher publisher;
    private final List<Throwable> thrown = new ArrayList<>();

    Notifier(ApplicationEventPublisher publisher) {
      this.publisher = publisher;
    }

    @TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
    public void afterCommit(Placed placed) {
      publish(placed.orderId());
    }

    @TransactionalEventListener(phase = TransactionPhase.AFTER_ROLLBACK)
    public void afterRollback(Failed failed) {
      publish(failed.orderId());
    }

    @TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
    @Transactional(propagation = Propagation.REQUIRES_NEW)
    public void inATransactionOfItsOwn(PlacedAndReported placed) {
      publish(placed.orderId());
    }

    /** What publishing threw so far (proxied, so read through a method). */
    public List<Throwable> thrown() {
      synchronized (thrown) {
        return List.copyOf(thrown);
      }
    }

    private void publish(String orderId) {
      try {
        publisher.publishEvent(new Notice(orderId));
      } catch (RuntimeException e) {
        synchronized (thrown) {
          thrown.add(e);
        }
        throw e;
      }
    }
  }

  /** Runs {@code test} in an application whose pool does not auto-commit, on tables of its own, dropped after. */
  private static void withApp(String outsideTransaction, Consumer<ConfigurableApplicationContext> test) {
    String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    String outboxTable = "ac_obx_" + suffix;
    String orderTable = "ac_ord_" + suffix;
    List<String> args = new ArrayList<>(List.of(
        "--spring.datasource.url=" + System.getProperty("idem.test.postgres.url",
            "jdbc:postgresql://127.0.0.1:5432/test"),
        "--spring.datasource.username=" + System.getProperty("idem.test.postgres.user", "postgres"),
        "--spring.datasource.password=", "--spring.datasource.hikari.auto-commit=false",
        "--spring.main.web-application-type=none", "--idem.outbox.table=" + outboxTable,
        "--idem.outbox.inbox-table=ac_ibx_" + suffix, "--idem.outbox.initialize-schema=true",
        "--idem.outbox.relay.poll-interval=1m", "--idem.events.outside-transaction=" + outsideTransaction));
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(App.class)
        .run(args.toArray(String[]::new))) {
      JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
      // the pool's connections do not auto-commit: DDL needs a transaction
      TransactionTemplate ddl = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
      try {
        ddl.executeWithoutResult(s -> jdbc.execute("CREATE TABLE " + orderTable + " (id VARCHAR(64) PRIMARY KEY)"));
        context.getBean(Orders.class).useTable(orderTable);
        test.accept(context);
      } finally {
        context.getBean(OutboxRelayLifecycle.class).stop();
        for (String table : List.of(outboxTable + "_attempt", outboxTable, "ac_ibx_" + suffix, orderTable)) {
          ddl.executeWithoutResult(s -> jdbc.execute("DROP TABLE IF EXISTS " + table));
        }
      }
    }
  }

  private static int written(ConfigurableApplicationContext context, String orderId) {
    String table = context.getEnvironment().getProperty("idem.outbox.table");
    return context.getBean(JdbcTemplate.class).queryForObject("SELECT COUNT(*) FROM " + table
        + " WHERE payload LIKE ?", Integer.class, "%\"" + orderId + "\"%");
  }

  private static List<Throwable> thrown(ConfigurableApplicationContext context) {
    return context.getBean(Notifier.class).thrown();
  }

  @Test
  void anEventPublishedAfterTheCommitIsRefusedByDefault() {
    withApp("fail", context -> {
      Orders orders = context.getBean(Orders.class);

      Throwable toTheCaller = catchThrowable(() -> orders.place("o-after-commit"));

      assertThat(thrown(context)).singleElement(InstanceOfAssertFactories.THROWABLE)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining(Notice.class.getName())
          .hasMessageContaining("after its Spring transaction committed or rolled back")
          .hasMessageContaining("AFTER_COMMIT")
          .hasMessageContaining("REQUIRES_NEW")
          .hasMessageContaining("idem.events.outside-transaction=own-transaction");
      // Spring runs AFTER_COMMIT listeners from afterCompletion, which logs what they throw
      assertThat(toTheCaller).as("logged by Spring, not thrown to the service's caller").isNull();
      assertThat(orders.exists("o-after-commit")).isTrue();
      assertThat(written(context, "o-after-commit")).isZero();
    });
  }

  @Test
  void anEventPublishedFromASynchronizationsAfterCommitIsRefusedToTheCaller() {
    withApp("fail", context -> {
      Orders orders = context.getBean(Orders.class);

      Throwable toTheCaller = catchThrowable(() -> orders.placeAndNotifyAfterCommit("o-sync"));

      assertThat(toTheCaller).isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("after its Spring transaction committed or rolled back");
      assertThat(orders.exists("o-sync")).isTrue();
      assertThat(written(context, "o-sync")).isZero();
    });
  }

  @Test
  void anEventPublishedAfterARollbackIsRefusedByDefault() {
    withApp("fail", context -> {
      Orders orders = context.getBean(Orders.class);

      Throwable toTheCaller = catchThrowable(() -> orders.placeAndFail("o-rolled-back"));

      assertThat(toTheCaller).hasMessageContaining("placing the order failed");
      assertThat(thrown(context)).singleElement(InstanceOfAssertFactories.THROWABLE)
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("after its Spring transaction committed or rolled back");
      assertThat(orders.exists("o-rolled-back")).isFalse();
      assertThat(written(context, "o-rolled-back")).isZero();
    });
  }

  @Test
  void withOwnTransactionsAnEventPublishedAfterTheCommitIsWrittenOnceAndDeliveredAtOnce() {
    withApp("own-transaction", context -> {
      Orders orders = context.getBean(Orders.class);
      CountDownLatch arrived = context.getBean(Recorder.class).expect("\"o-own\"");

      orders.place("o-own");

      assertThat(thrown(context)).isEmpty();
      assertThat(await(arrived)).as("written, committed, and the relay woken (its poll is a minute away)").isTrue();
      assertThat(written(context, "o-own")).isEqualTo(1);
      assertThat(context.getBean(Recorder.class).sentTo("recording:notices"))
          .filteredOn(m -> m.payload().contains("\"o-own\"")).singleElement()
          .satisfies(m -> assertThat(m.type()).isEqualTo("order.notice"));
    });
  }

  @Test
  void aRequiresNewTransactionOfTheListenerWritesTheEventWithIt() {
    withApp("fail", context -> {
      Orders orders = context.getBean(Orders.class);
      CountDownLatch arrived = context.getBean(Recorder.class).expect("\"o-new\"");

      orders.placeAndReport("o-new");

      assertThat(thrown(context)).isEmpty();
      assertThat(await(arrived)).as("committed with the listener's transaction, which woke the relay").isTrue();
      assertThat(written(context, "o-new")).isEqualTo(1);
    });
  }

  private static boolean await(CountDownLatch latch) {
    try {
      return latch.await(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
