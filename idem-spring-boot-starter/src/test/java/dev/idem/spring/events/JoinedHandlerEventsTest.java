package dev.idem.spring.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxRelay;
import dev.idem.spring.internal.JoinedHandler;
import dev.idem.spring.outbox.SpringAfterCommit;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.PayloadApplicationEvent;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;
import org.springframework.jdbc.support.JdbcTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Events published in a handler of an inbox that commits by itself (no Spring transaction manager of its data source,
 * so the handler is a {@link JoinedHandler}), as docs/events.md says: written in the inbox's transaction, whether
 * published in the handler itself (where no Spring transaction is active, and the event waits for the relay's poll)
 * or in a Spring transaction the handler opens (a {@code @Transactional} method's), whose wake-up of the relay comes
 * when that transaction ends, before the inbox commits; rolled back with the inbox row, so a retried message leaves
 * one event, whatever {@code idem.events.outside-transaction} says. On H2, and on PostgreSQL by
 * {@link PostgresJoinedHandlerEventsTest}.
 */
class JoinedHandlerEventsTest {
  record Shipped(String orderId) {}

  private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  private final String outboxTable = "jh_obx_" + suffix;
  private final String inboxTable = "jh_ibx_" + suffix;
  private final DataSource dataSource = dataSource();
  private final Inbox inbox = Inbox.builder(JdbcInboxStore.builder(dataSource).table(inboxTable)
      .createSchemaIfMissing(true).build()).build();
  /** Per wake-up of the relay, whether the inbox row was committed by then. */
  private final List<Boolean> wokenAfterTheInboxCommitted = new CopyOnWriteArrayList<>();
  private final Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(dataSource).table(outboxTable)
      .createSchemaIfMissing(true).build())
      .afterCommit((tx, wakeUp) -> new SpringAfterCommit().register(tx, () -> {
        wokenAfterTheInboxCommitted.add(inbox.contains("joined", "m-1"));
        wakeUp.run();
      })).build();
  private final ExternalizedEvents events = new ExternalizedEvents(outbox,
      e -> "{\"orderId\":\"" + ((Shipped) e).orderId() + "\"}", dataSource, OutsideTransaction.FAIL,
      Map.of(Shipped.class.getName(), "recording:shipments"), List.of(), Set.of(), getClass().getClassLoader());
  private final TransactionTemplate transactional = new TransactionTemplate(new JdbcTransactionManager(dataSource));

  /** Would write an event published outside a transaction in one of its own. */
  private final ExternalizedEvents ownTransactionEvents = new ExternalizedEvents(outbox,
      e -> "{\"orderId\":\"" + ((Shipped) e).orderId() + "\"}", dataSource, OutsideTransaction.OWN_TRANSACTION,
      Map.of(Shipped.class.getName(), "recording:shipments"), List.of(), Set.of(), getClass().getClassLoader());

  /** The database: H2 here, PostgreSQL in {@link PostgresJoinedHandlerEventsTest}. */
  DataSource dataSource() {
    return new DriverManagerDataSource("jdbc:h2:mem:joined-events-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", "sa",
        "");
  }

  @AfterEach
  void dropTables() {
    JdbcTemplate jdbc = new JdbcTemplate(dataSource);
    for (String table : List.of(outboxTable + "_attempt", outboxTable, inboxTable)) {
      jdbc.execute("DROP TABLE IF EXISTS " + table);
    }
  }

  private void publish(String orderId) {
    events.onApplicationEvent(new PayloadApplicationEvent<>(this, new Shipped(orderId)));
  }

  private int written(String orderId) {
    return new JdbcTemplate(dataSource).queryForObject("SELECT COUNT(*) FROM " + outboxTable
        + " WHERE payload LIKE ?", Integer.class, "%" + orderId + "%");
  }

  /** Runs {@code id} through the inbox, with a started relay of the route (its poll a minute) to be woken. */
  private void process(String id, InboxHandler handler) {
    try (OutboxRelay relay = OutboxRelay.builder(outbox).route("recording", message -> DeliveryResult.delivered())
        .pollInterval(Duration.ofMinutes(1)).build()) {
      relay.start();
      inbox.processBatchAndCommit("joined", List.of(InboxEvent.of(id, "{}".getBytes(StandardCharsets.UTF_8))),
          JoinedHandler.of(handler, inbox));
    }
  }

  @Test
  void inTheHandlerAndInItsTransactionalMethodAnEventIsWrittenInTheInboxsTransaction() {
    process("m-1", (tx, event) -> {
      publish("o-direct");
      transactional.executeWithoutResult(status -> publish("o-1"));
      return null;
    });

    assertThat(written("o-direct")).as("written, and committed with the inbox row").isEqualTo(1);
    assertThat(written("o-1")).as("written, and committed with the inbox row").isEqualTo(1);
    assertThat(inbox.contains("joined", "m-1")).isTrue();
    assertThat(wokenAfterTheInboxCommitted).as("woken when the method's transaction ended").containsExactly(false);
  }

  @Test
  void anEventOfATransactionalMethodRollsBackWithTheInboxRow() {
    Throwable failed = catchThrowable(() -> process("m-2", (tx, event) -> {
      transactional.executeWithoutResult(status -> publish("o-2"));
      throw new IllegalStateException("the handler failed after the method returned");
    }));

    assertThat(failed).isNotNull();
    assertThat(written("o-2")).isZero();
    assertThat(inbox.contains("joined", "m-2")).isFalse();
  }

  @Test
  void withOwnTransactionsAnEventOfTheHandlerStillRollsBackWithTheInboxRowSoARetriedMessageLeavesOne() {
    int[] attempts = new int[1];
    InboxHandler handler = (tx, event) -> {
      ownTransactionEvents.onApplicationEvent(new PayloadApplicationEvent<>(this, new Shipped("o-retried")));
      if (++attempts[0] <= 2) {
        throw new IllegalStateException("attempt " + attempts[0] + " failed after publishing");
      }
      return null;
    };

    assertThat(catchThrowable(() -> process("m-3", handler))).hasMessageContaining("attempt 1 failed");
    assertThat(catchThrowable(() -> process("m-3", handler))).hasMessageContaining("attempt 2 failed");
    process("m-3", handler);

    assertThat(attempts[0]).isEqualTo(3);
    assertThat(inbox.contains("joined", "m-3")).isTrue();
    assertThat(written("o-retried")).as("the failed attempts' events rolled back with them").isEqualTo(1);
  }
}
