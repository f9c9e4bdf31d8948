package dev.idem.spring.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.spring.events.app.Checkout;
import dev.idem.spring.events.app.EventsApp;
import dev.idem.spring.events.app.EventsApp.Payments;
import dev.idem.spring.events.app.EventsApp.Recorder;
import dev.idem.spring.outbox.OutboxRelayLifecycle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Domain events in a running Spring Boot application: events published through {@link ApplicationEventPublisher}
 * inside {@code @Transactional} are written with the transaction's other writes and sent by the auto-configured relay
 * right after the commit (its poll is a minute away), or never when the transaction rolls back. Run on H2 and
 * PostgreSQL by the subclasses.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class EventsStarterTest {
  private static final long WAIT_SECONDS = 20;

  private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  private final String outboxTable = "ev_obx_" + suffix;
  private final String inboxTable = "ev_ibx_" + suffix;
  private final String paymentTable = "ev_pay_" + suffix;
  private ConfigurableApplicationContext context;
  private Payments payments;
  private Recorder recorder;
  private Outbox outbox;

  /** The data source's properties. */
  abstract List<String> databaseProperties();

  @BeforeAll
  void start() {
    List<String> args = new ArrayList<>(databaseProperties());
    args.addAll(List.of("--spring.main.web-application-type=none",
        "--idem.outbox.table=" + outboxTable, "--idem.outbox.inbox-table=" + inboxTable,
        "--idem.outbox.initialize-schema=true",
        "--idem.outbox.ordered-types=account.changed",
        "--idem.outbox.relay.poll-interval=1m",
        "--idem.events.routes[" + EventsApp.Refunded.class.getName() + "]=recording:refunds"));
    context = new SpringApplicationBuilder(EventsApp.class).run(args.toArray(String[]::new));
    payments = context.getBean(Payments.class);
    payments.useTable(paymentTable);
    recorder = context.getBean(Recorder.class);
    outbox = context.getBean(Outbox.class);
  }

  @AfterAll
  void stop() {
    try {
      context.getBean(OutboxRelayLifecycle.class).stop();
      JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
      jdbc.update("DELETE FROM checkout_order WHERE id LIKE ?", "ord_" + suffix + "%");
      for (String table : List.of(outboxTable + "_attempt", outboxTable, inboxTable, paymentTable)) {
        jdbc.execute("DROP TABLE IF EXISTS " + table);
      }
    } finally {
      context.close();
    }
  }

  private List<OutboxEntry> entriesMentioning(String text) {
    return outbox.list(OutboxQuery.all().limit(500)).entries().stream().filter(e -> e.payload().contains(text))
        .toList();
  }

  @Test
  void anEventPublishedInATransactionThatCommitsIsDeliveredOnceRightAfterTheCommit() throws Exception {
    // one at a time: each must arrive long before the relay's next poll (a minute)
    for (int i = 0; i < 20; i++) {
      String id = "pay_" + suffix + "_" + i;
      CountDownLatch arrived = recorder.expect("\"paymentId\":\"" + id + "\"");
      payments.pay(id, 100 + i, false);
      assertThat(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS)).as("payment %d's event delivered", i).isTrue();
    }
    String id = "pay_" + suffix + "_0";
    List<OutboxMessage> sent = recorder.sentTo("recording:payments").stream()
        .filter(m -> m.payload().contains(id + "\"")).toList();
    assertThat(sent).singleElement().satisfies(m -> {
      assertThat(m.type()).isEqualTo("payment.succeeded");
      assertThat(m.payload()).isEqualTo("{\"paymentId\":\"" + id + "\",\"amount\":100}");
    });
    assertThat(payments.exists(id)).isTrue();
    assertThat(entriesMentioning("paid ")).as("an event that is neither annotated nor configured stays in Spring")
        .isEmpty();
  }

  @Test
  void anEventPublishedInATransactionThatRollsBackIsNeverWritten() throws Exception {
    String failed = "pay_" + suffix + "_failed";
    assertThatThrownBy(() -> payments.pay(failed, 5, true)).hasMessageContaining("the payment failed");
    // a later commit's event arrives: the rolled-back one, enqueued before it, would have been claimed with it
    String later = "pay_" + suffix + "_later";
    CountDownLatch arrived = recorder.expect(later);
    payments.pay(later, 6, false);
    assertThat(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

    assertThat(payments.exists(failed)).isFalse();
    assertThat(entriesMentioning(failed)).isEmpty();
    assertThat(recorder.sent).noneMatch(m -> m.payload().contains(failed));
  }

  @Test
  void publishingOutsideATransactionIsAnErrorByDefault() {
    String id = "pay_" + suffix + "_outside";
    assertThatThrownBy(() -> payments.payWithoutTransaction(id)).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(EventsApp.PaymentSucceeded.class.getName())
        .hasMessageContaining("outside a transaction")
        .hasMessageContaining("idem.events.outside-transaction");
    assertThat(entriesMentioning(id)).isEmpty();
  }

  @Test
  void eventsOfOneKeyAreDeliveredInOrder() throws Exception {
    String account = "acc_" + suffix;
    CountDownLatch last = recorder.expect("\"account\":\"" + account + "\",\"version\":12}");
    payments.changeAccount(account, 1, 6);
    payments.changeAccount(account, 7, 12);
    assertThat(last.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

    List<OutboxMessage> sent = recorder.sentTo("recording:accounts").stream()
        .filter(m -> m.aggregateId().equals(account)).toList();
    assertThat(sent).extracting(m -> m.payload().replaceAll(".*\"version\":(\\d+).*", "$1"))
        .containsExactly("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12");
    assertThat(sent).allSatisfy(m -> {
      assertThat(m.type()).isEqualTo("account.changed");
      assertThat(m.aggregateType()).isEqualTo("account");
    });
    assertThat(outbox.isOrdered("account.changed")).isTrue();
  }

  @Test
  void theDocumentedCheckoutWritesItsEventWithTheOrder() throws Exception {
    String order = "ord_" + suffix;
    CountDownLatch arrived = recorder.expect(order);
    context.getBean(Checkout.class).place(order, 1250);
    assertThat(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    assertThat(recorder.sentTo("recording:orders")).filteredOn(m -> m.payload().contains(order)).singleElement()
        .satisfies(m -> {
          assertThat(m.type()).isEqualTo("order.placed");
          assertThat(m.payload()).isEqualTo("{\"orderId\":\"" + order + "\",\"total\":1250}");
        });
  }

  @Test
  void docsShowTheCheckoutVerbatim() throws Exception {
    List<String> code = new ArrayList<>();
    boolean in = false;
    for (String line : Files.readAllLines(Path.of("src/test/java/dev/idem/spring/events/app/Checkout.java"))) {
      if (line.strip().equals("// events.md:end")) {
        break;
      }
      if (in) {
        code.add(line);
      }
      in |= line.strip().equals("// events.md:begin");
    }
    assertThat(code).hasSizeGreaterThan(10);
    assertThat(Files.readString(Path.of("../docs/events.md"))).contains("```java\n" + String.join("\n", code)
        + "\n```");
  }

  @Test
  void aClassListedInThePropertiesIsRoutedToItsDestination() throws Exception {
    String id = "pay_" + suffix + "_refunded";
    CountDownLatch arrived = recorder.expect(id);
    payments.refund(id);
    assertThat(arrived.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
    assertThat(recorder.sentTo("recording:refunds")).filteredOn(m -> m.payload().contains(id)).singleElement()
        .satisfies(m -> assertThat(m.type()).isEqualTo("Refunded"));
  }
}
