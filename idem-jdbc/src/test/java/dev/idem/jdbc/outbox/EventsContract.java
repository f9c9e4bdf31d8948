package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStatus;
import dev.idem.outbox.events.EventRoute;
import dev.idem.outbox.events.Events;
import dev.idem.retry.Backoff;
import dev.idem.retry.Jitter;
import dev.idem.test.MutableClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Domain events into the outbox on a real database: an event published in a transaction is written in it and
 * relayed to the route of its class only if it commits, in order per ordering key, dead-lettered and replayed like
 * any outbox event; and a started relay is woken by the commit, not left to its poll. Run against PostgreSQL,
 * MariaDB and H2 by the subclasses.
 */
abstract class EventsContract {
  /** An event of the application; its own JSON stands in for the application's mapper. */
  interface Json {
    String json();
  }

  record PaymentSucceeded(String paymentId, long amount, String tenant) implements Json {
    @Override
    public String json() {
      return "{\"paymentId\":\"" + paymentId + "\",\"amount\":" + amount + "}";
    }
  }

  record AccountChanged(String account, int version) implements Json {
    @Override
    public String json() {
      return "{\"account\":\"" + account + "\",\"version\":" + version + "}";
    }
  }

  /** A subclass without a route of its own goes where its interface's route says. */
  record Audited(String what) implements Json {
    @Override
    public String json() {
      return "{\"what\":\"" + what + "\"}";
    }
  }

  record Unrouted(String x) {}

  final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  final RecordingTransport payments = new RecordingTransport();
  final RecordingTransport accounts = new RecordingTransport();
  final List<OutboxRelay> started = new ArrayList<>();
  HikariDataSource ds;
  JdbcOutboxStore store;
  Outbox outbox;
  Events events;

  abstract JdbcDialect dialect();

  @BeforeEach
  void setUp() {
    ds = Databases.pool(dialect());
    String suffix = getClass().getSimpleName().substring(0, 2).toLowerCase();
    store = JdbcOutboxStore.builder(ds).table(Databases.freshTables(dialect(), "obe_" + suffix, "ibe_" + suffix))
        .build();
    outbox = Outbox.builder(store).clock(clock).orderedTypes(Set.of("account.changed")).build();
    events = Events.builder(outbox).serializer(e -> ((Json) e).json())
        .route(EventRoute.of(PaymentSucceeded.class, "payment.succeeded", "payments:main")
            .headers(e -> Map.of("x-tenant", e.tenant())))
        .route(EventRoute.of(AccountChanged.class, "account.changed", "accounts")
            .orderedBy("account", AccountChanged::account))
        .route(EventRoute.of(Json.class, "audited", "accounts:audit"))
        .build();
  }

  @AfterEach
  void stopRelays() {
    started.forEach(OutboxRelay::close);
  }

  OutboxRelay.Builder relay() {
    return OutboxRelay.builder(outbox).name("events").route("payments", payments, 3).route("accounts", accounts, 3)
        .backoff(Backoff.exponential(Duration.ofSeconds(1), Duration.ofMinutes(10), Jitter.NONE));
  }

  OutboxRelay start(OutboxRelay relay) {
    started.add(relay);
    relay.start();
    return relay;
  }

  int countRows() throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + store.table());
        var rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  @Test
  void anEventPublishedInACommittedTransactionIsDeliveredOnceToTheRouteOfItsType() throws Exception {
    UUID id = events.inTransaction(tx -> Events.publish(new PaymentSucceeded("pay_1", 1200, "alice")));
    OutboxRelay relay = relay().build();

    assertThat(relay.runOnce()).isEqualTo(1);
    assertThat(relay.runOnce()).isZero();
    assertThat(accounts.sent).isEmpty();
    assertThat(payments.sent).singleElement().satisfies(m -> {
      assertThat(m.id()).isEqualTo(id);
      assertThat(m.type()).isEqualTo("payment.succeeded");
      assertThat(m.payload()).isEqualTo("{\"paymentId\":\"pay_1\",\"amount\":1200}");
      assertThat(m.destination()).isEqualTo("payments:main");
      assertThat(m.headers()).containsEntry("x-tenant", "alice");
      assertThat(m.aggregateId()).as("without an ordering key each event is its own aggregate")
          .isEqualTo(id.toString());
    });
    assertThat(outbox.find(id).orElseThrow().status()).isEqualTo(OutboxStatus.DELIVERED);
  }

  @Test
  void theCallersOwnTransactionAndTheNearestRouteOfAnInterface() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      events.publish(JdbcTransaction.of(c), new Audited("login"));
      events.publish(JdbcTransaction.of(c), new PaymentSucceeded("pay_2", 5, "bob"));
      c.commit();
    }
    assertThat(relay().build().runOnce()).isEqualTo(2);
    assertThat(accounts.sent).singleElement().satisfies(m -> {
      assertThat(m.type()).isEqualTo("audited");
      assertThat(m.destination()).isEqualTo("accounts:audit");
    });
    assertThat(payments.types()).containsExactly("payment.succeeded");
  }

  @Test
  void aTransactionThatRollsBackWritesNothing() throws Exception {
    assertThatThrownBy(() -> events.inTransaction(tx -> {
      Events.publish(new PaymentSucceeded("pay_3", 1, "alice"));
      throw new IllegalStateException("the business write failed");
    })).hasMessage("the business write failed");
    events.inTransaction(tx -> {
      Events.publish(new PaymentSucceeded("pay_4", 1, "alice"));
      tx.setRollbackOnly();
      return null;
    });
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      events.publish(JdbcTransaction.of(c), new PaymentSucceeded("pay_5", 1, "alice"));
      c.rollback();
    }

    assertThat(countRows()).isZero();
    assertThat(relay().build().runOnce()).isZero();
    assertThat(payments.sent).isEmpty();
  }

  @Test
  void anUnknownTypeOrAPublishOutsideATransactionIsAnErrorAndTheTransactionRollsBack() throws Exception {
    assertThatThrownBy(() -> events.inTransaction(tx -> {
      Events.publish(new PaymentSucceeded("pay_6", 1, "alice"));
      return Events.publish(new Unrouted("?"));
    })).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no event route for "
        + Unrouted.class.getName());
    assertThatThrownBy(() -> Events.publish(new PaymentSucceeded("pay_7", 1, "alice")))
        .isInstanceOf(IllegalStateException.class).hasMessageContaining("outside a transaction");
    try (Connection c = ds.getConnection()) {
      assertThat(c.getAutoCommit()).isTrue();
      assertThatThrownBy(() -> events.publish(JdbcTransaction.of(c), new PaymentSucceeded("pay_8", 1, "alice")))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("auto-commit");
    }
    assertThat(countRows()).isZero();
  }

  @Test
  void eventsWithTheSameOrderingKeyAreDeliveredInTheOrderTheyWerePublished() throws Exception {
    int perKey = 5;
    events.inTransaction(tx -> {
      for (int v = 1; v <= perKey; v++) {
        Events.publish(new AccountChanged("acc_a", v));
        Events.publish(new AccountChanged("acc_b", v));
      }
      return null;
    });
    AtomicInteger failFirst = new AtomicInteger(1);
    accounts.answering(m -> m.aggregateId().equals("acc_a") && failFirst.getAndDecrement() > 0
        ? DeliveryResult.retry("HTTP 503", 503) : DeliveryResult.delivered());
    OutboxRelay relay = relay().batchSize(50).build();

    assertThat(relay.runOnce()).as("only the head of each key is due").isEqualTo(2);
    clock.advance(Duration.ofSeconds(1));
    for (int i = 0; i < 2 * perKey && relay.runOnce() > 0; i++) {
      clock.advance(Duration.ofSeconds(1));
    }

    List<String> a = new ArrayList<>();
    List<String> b = new ArrayList<>();
    for (OutboxMessage m : List.copyOf(accounts.sent)) {
      (m.aggregateId().equals("acc_a") ? a : b).add(m.payload().replaceAll(".*\"version\":(\\d+).*", "$1"));
    }
    assertThat(a).containsExactly("1", "1", "2", "3", "4", "5");
    assertThat(b).containsExactly("1", "2", "3", "4", "5");
    assertThat(outbox.list(OutboxQuery.status(OutboxStatus.DELIVERED)).entries()).hasSize(2 * perKey);
  }

  @Test
  void aDeadLetteredEventIsReplayedThroughTheAdminApi() throws Exception {
    payments.answering(m -> DeliveryResult.permanent("HTTP 410", 410));
    UUID id = events.inTransaction(tx -> Events.publish(new PaymentSucceeded("pay_9", 1, "alice")));
    OutboxRelay relay = relay().build();
    assertThat(relay.runOnce()).isEqualTo(1);
    OutboxEntry dead = outbox.find(id).orElseThrow();
    assertThat(dead.status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(dead.lastError()).isEqualTo("HTTP 410");

    payments.answering(m -> DeliveryResult.delivered());
    assertThat(outbox.replay(id)).isTrue();
    assertThat(relay.runOnce()).isEqualTo(1);
    assertThat(outbox.find(id).orElseThrow().status()).isEqualTo(OutboxStatus.DELIVERED);
    assertThat(payments.sent).extracting(OutboxMessage::id).containsExactly(id, id);
  }

  /** Starts {@code relay} and returns once its first cycle has claimed: it is idle, waiting for its poll. */
  OutboxRelay startIdle(OutboxRelay.Builder relay, ConcurrentHashMap<UUID, CountDownLatch> arrivals)
      throws Exception {
    payments.answering(m -> {
      arrivals.computeIfAbsent(m.id(), k -> new CountDownLatch(1)).countDown();
      return DeliveryResult.delivered();
    });
    UUID primer = events.inTransaction(tx -> Events.publish(new PaymentSucceeded("primer", 1, "alice")));
    OutboxRelay r = start(relay.pollInterval(Duration.ofMinutes(1)).build());
    assertThat(arrivals.computeIfAbsent(primer, k -> new CountDownLatch(1)).await(30, TimeUnit.SECONDS)).isTrue();
    return r;
  }

  @Test
  void aCommitWakesTheRelayWithoutWaitingForItsPoll() throws Exception {
    ConcurrentHashMap<UUID, CountDownLatch> arrivals = new ConcurrentHashMap<>();
    startIdle(relay(), arrivals);
    // one commit at a time: each one must be delivered without the poll (a minute) ever coming
    for (int i = 0; i < 200; i++) {
      int n = i;
      UUID id = events.inTransaction(tx -> Events.publish(new PaymentSucceeded("pay_w" + n, n, "alice")));
      assertThat(arrivals.computeIfAbsent(id, k -> new CountDownLatch(1)).await(30, TimeUnit.SECONDS))
          .as("event %d delivered after its commit", i).isTrue();
    }
  }

  @Test
  void manyConcurrentCommitsAreAllDeliveredWithoutThePoll() throws Exception {
    ConcurrentHashMap<UUID, CountDownLatch> arrivals = new ConcurrentHashMap<>();
    startIdle(relay().threads(2).batchSize(7), arrivals);
    int producers = 4;
    int each = 100;
    ExecutorService pool = Executors.newFixedThreadPool(producers);
    try {
      List<Future<List<UUID>>> sent = new ArrayList<>();
      for (int p = 0; p < producers; p++) {
        int producer = p;
        sent.add(pool.submit(() -> {
          List<UUID> ids = new ArrayList<>();
          for (int i = 0; i < each; i++) {
            int n = i;
            ids.add(events.inTransaction(tx -> Events.publish(new PaymentSucceeded("p" + producer + "_" + n, n,
                "alice"))));
          }
          return ids;
        }));
      }
      for (Future<List<UUID>> f : sent) {
        for (UUID id : f.get(60, TimeUnit.SECONDS)) {
          assertThat(arrivals.computeIfAbsent(id, k -> new CountDownLatch(1)).await(30, TimeUnit.SECONDS))
              .as("event %s delivered", id).isTrue();
        }
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(payments.sent).hasSize(1 + producers * each);
  }

  @Test
  void theOutboxsOwnTransactionsAndAnExplicitWakeAlsoWakeTheRelay() throws Exception {
    ConcurrentHashMap<UUID, CountDownLatch> arrivals = new ConcurrentHashMap<>();
    startIdle(relay(), arrivals);
    OutboxEvent plain = OutboxEvent.builder("payment.succeeded").aggregate("payment", "pay_p").payload("{}")
        .destination("payments:main").build();
    outbox.inTransaction(tx -> outbox.enqueue(tx, plain));
    assertThat(arrivals.computeIfAbsent(plain.id(), k -> new CountDownLatch(1)).await(30, TimeUnit.SECONDS))
        .isTrue();

    UUID own;
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      own = events.publish(JdbcTransaction.of(c), new PaymentSucceeded("pay_own", 1, "alice"));
      c.commit();
    }
    // the outbox has no AfterCommit hook, so it cannot see that commit: the caller wakes the relays of its routes
    outbox.wakeRelays(Set.of("payments"));
    assertThat(arrivals.computeIfAbsent(own, k -> new CountDownLatch(1)).await(30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void withWakeOnCommitOffTheRelayWaitsForItsPoll() throws Exception {
    ConcurrentHashMap<UUID, CountDownLatch> arrivals = new ConcurrentHashMap<>();
    OutboxRelay relay = startIdle(relay().wakeOnCommit(false), arrivals);
    UUID id = events.inTransaction(tx -> Events.publish(new PaymentSucceeded("pay_late", 1, "alice")));
    CountDownLatch arrived = arrivals.computeIfAbsent(id, k -> new CountDownLatch(1));

    assertThat(arrived.await(500, TimeUnit.MILLISECONDS)).as("not woken by the commit: waits for its poll")
        .isFalse();
    assertThat(outbox.find(id).orElseThrow().status()).isEqualTo(OutboxStatus.PENDING);
    relay.wakeUp();
    assertThat(arrived.await(30, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void aRouteOrderedByAKeyNeedsTheOutboxToOrderItsType() {
    assertThatThrownBy(() -> Events.builder(Outbox.builder(store).build()).serializer(e -> "{}")
        .route(EventRoute.of(AccountChanged.class, "account.changed", "accounts")
            .orderedBy("account", AccountChanged::account)).build())
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not order type 'account.changed'");
  }
}
