package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxAttempt;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxPage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStatus;
import dev.idem.outbox.OutboxTransport;
import dev.idem.outbox.spi.ClaimedEvent;
import dev.idem.outbox.spi.FailedDelivery;
import dev.idem.retry.Backoff;
import dev.idem.retry.Jitter;
import dev.idem.test.MutableClock;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every database must do for the outbox: enqueue in the caller's transaction, claim without overlap, retry with
 * backoff and history, die after the maximum, replay, discard, purge, and keep order per aggregate. Run against
 * PostgreSQL, MariaDB and H2 by the subclasses; time is a {@link MutableClock}, so nothing waits.
 */
abstract class OutboxContract {
  protected final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  protected HikariDataSource ds;
  protected JdbcOutboxStore store;
  protected Outbox outbox;
  protected final RecordingTransport sink = new RecordingTransport();

  abstract JdbcDialect dialect();

  @BeforeEach
  void setUp() {
    ds = Databases.pool(dialect());
    String table = Databases.freshTables(dialect(), "obx_" + getClass().getSimpleName().substring(0, 2).toLowerCase(),
        "ibx_" + getClass().getSimpleName().substring(0, 2).toLowerCase());
    store = JdbcOutboxStore.builder(ds).table(table).build();
    outbox = Outbox.builder(store).clock(clock).orderedTypes(Set.of("account.updated")).build();
  }

  /** A claim as a relay makes it: due events for {@code token}, leased from now for {@code lease}. */
  List<ClaimedEvent> claim(String token, Duration lease, int limit) {
    Instant now = clock.instant();
    return store.claim(token, List.of(), now, now.plus(lease), limit);
  }

  /** Records a batch's outcome as a relay does, now, marking delivered events. */
  int finish(String token, List<ClaimedEvent> delivered, List<FailedDelivery> failures) {
    return store.finish(token, delivered, failures, false, clock.instant());
  }

  OutboxRelay.Builder relay() {
    return OutboxRelay.builder(outbox).name("t").route("sink", sink, 3).batchSize(50)
        .backoff(Backoff.exponential(Duration.ofSeconds(1), Duration.ofMinutes(10), Jitter.NONE));
  }

  OutboxEvent event(String type, String aggregate, int n) {
    return OutboxEvent.builder(type).aggregate("account", aggregate).payload("{\"n\":" + n + "}")
        .destination("sink:main").build();
  }

  void enqueueCommitted(OutboxEvent... events) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      outbox.enqueueAll(JdbcTransaction.of(c), List.of(events));
      c.commit();
    }
  }

  int countRows() throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + store.table());
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getInt(1);
    }
  }

  @Test
  void anEventExistsOnlyIfItsTransactionCommits() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      outbox.enqueue(JdbcTransaction.of(c), event("payment.succeeded", "a1", 1));
      c.rollback();
    }
    assertThat(countRows()).isZero();
    assertThat(relay().build().runOnce()).isZero();

    OutboxEvent e = event("payment.succeeded", "a1", 2);
    enqueueCommitted(e);
    assertThat(relay().build().runOnce()).isEqualTo(1);
    assertThat(sink.sent).singleElement().satisfies(m -> {
      assertThat(m.id()).isEqualTo(e.id());
      assertThat(m.payload()).isEqualTo("{\"n\":2}");
      assertThat(m.attempt()).isEqualTo(1);
      assertThat(m.destinationDetail()).isEqualTo("main");
    });
    OutboxEntry entry = outbox.find(e.id()).orElseThrow();
    assertThat(entry.status()).isEqualTo(OutboxStatus.DELIVERED);
    assertThat(entry.attempts()).isEqualTo(1);
    assertThat(entry.leaseOwner()).isNull();
    assertThat(entry.finishedAt()).isEqualTo(clock.instant());
  }

  @Test
  void headersAndScheduledTimesRoundTrip() throws Exception {
    OutboxEvent later = OutboxEvent.builder("reminder").aggregate("account", "a1").payload("[1,2]")
        .header("x-tenant", "alice").header("traceparent", "00-abc-def-01").destination("sink:x")
        .availableAt(clock.instant().plusSeconds(60)).build();
    enqueueCommitted(later);
    OutboxRelay relay = relay().build();
    assertThat(relay.runOnce()).isZero();
    clock.advance(Duration.ofSeconds(60));
    assertThat(relay.runOnce()).isEqualTo(1);
    assertThat(sink.sent.get(0).headers()).containsEntry("x-tenant", "alice")
        .containsEntry("traceparent", "00-abc-def-01");
  }

  @Test
  void badEventsAreRefusedAndNothingIsWritten() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      OutboxEvent notJson = OutboxEvent.builder("x").aggregate("a", "1").payload("{oops").destination("sink").build();
      assertThatThrownBy(() -> outbox.enqueue(JdbcTransaction.of(c), notJson))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not JSON");
      Outbox small = Outbox.builder(store).maxPayloadBytes(10).build();
      assertThatThrownBy(() -> small.enqueue(JdbcTransaction.of(c), event("x", "1", 123456789)))
          .hasMessageContaining("larger than 10");
      c.commit();
    }
    assertThat(countRows()).isZero();
    assertThatThrownBy(() -> OutboxEvent.builder("x").aggregate("a", "1").payload("{}").destination("no spaces"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> OutboxEvent.builder("x").header("bad\nname", "v"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> OutboxEvent.builder("x").header("ok", "line\r\nbreak"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> OutboxEvent.builder("x").aggregate("a", "1").payload("{}").build())
        .hasMessageContaining("destination is required");
  }

  @Test
  void aFailureBacksOffAndIsKeptInTheHistory() throws Exception {
    OutboxEvent e = event("payment.succeeded", "a1", 1);
    enqueueCommitted(e);
    sink.answering(m -> DeliveryResult.retry("HTTP 500", 500));
    OutboxRelay relay = relay().build();
    assertThat(relay.runOnce()).isEqualTo(1);

    OutboxEntry after = outbox.find(e.id()).orElseThrow();
    assertThat(after.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(after.attempts()).isEqualTo(1);
    assertThat(after.lastError()).isEqualTo("HTTP 500");
    assertThat(after.availableAt()).isEqualTo(clock.instant().plusSeconds(1));
    assertThat(after.history()).singleElement().satisfies(a -> {
      assertThat(a.attempt()).isEqualTo(1);
      assertThat(a.error()).isEqualTo("HTTP 500");
      assertThat(a.responseCode()).isEqualTo(500);
      assertThat(a.at()).isEqualTo(clock.instant());
    });
    assertThat(relay.runOnce()).as("not due before its backoff").isZero();
    clock.advance(Duration.ofSeconds(1));
    assertThat(relay.runOnce()).isEqualTo(1);
    assertThat(outbox.find(e.id()).orElseThrow().availableAt()).as("second retry waits 2 s")
        .isEqualTo(clock.instant().plusSeconds(2));
    assertThat(sink.sent).extracting(OutboxMessage::attempt).containsExactly(1, 2);
  }

  @Test
  void aDestinationsRetryAfterWinsOverAShorterBackoff() throws Exception {
    OutboxEvent e = event("payment.succeeded", "a1", 1);
    enqueueCommitted(e);
    sink.answering(m -> DeliveryResult.retryAfter("HTTP 429", 429, Duration.ofSeconds(120)));
    relay().build().runOnce();
    assertThat(outbox.find(e.id()).orElseThrow().availableAt()).isEqualTo(clock.instant().plusSeconds(120));
  }

  @Test
  void aPoisonEventDiesAfterTheMaximumWithItsHistoryAndAReplayDeliversIt() throws Exception {
    OutboxEvent poison = event("payment.succeeded", "a1", 1);
    enqueueCommitted(poison);
    sink.answering(m -> DeliveryResult.retry("HTTP 500", 500));
    OutboxRelay relay = relay().build();
    for (int i = 0; i < 3; i++) {
      assertThat(relay.runOnce()).isEqualTo(1);
      clock.advance(Duration.ofMinutes(10));
    }
    assertThat(relay.runOnce()).as("dead events are not claimed").isZero();
    OutboxPage dead = outbox.list(OutboxQuery.status(OutboxStatus.DEAD));
    assertThat(dead.entries()).singleElement().satisfies(d -> {
      assertThat(d.id()).isEqualTo(poison.id());
      assertThat(d.attempts()).isEqualTo(3);
      assertThat(d.history()).extracting(OutboxAttempt::attempt).containsExactly(1, 2, 3);
    });

    sink.answering(m -> DeliveryResult.delivered());
    assertThat(outbox.replay(poison.id())).isTrue();
    assertThat(outbox.replay(poison.id())).as("already pending").isFalse();
    assertThat(relay.runOnce()).isEqualTo(1);
    OutboxEntry delivered = outbox.find(poison.id()).orElseThrow();
    assertThat(delivered.status()).isEqualTo(OutboxStatus.DELIVERED);
    assertThat(delivered.attempts()).isEqualTo(4);
    assertThat(delivered.history()).as("history survives the replay").hasSize(3);
    assertThat(sink.sent).extracting(OutboxMessage::id).containsOnly(poison.id()).hasSize(4);
  }

  @Test
  void aReplayGivesAFreshSetOfAttempts() throws Exception {
    OutboxEvent poison = event("payment.succeeded", "a1", 1);
    enqueueCommitted(poison);
    sink.answering(m -> DeliveryResult.retry("down", null));
    OutboxRelay relay = relay().build();
    for (int i = 0; i < 3; i++) {
      relay.runOnce();
      clock.advance(Duration.ofMinutes(10));
    }
    outbox.replay(poison.id());
    relay.runOnce();
    clock.advance(Duration.ofMinutes(10));
    OutboxEntry once = outbox.find(poison.id()).orElseThrow();
    assertThat(once.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(once.attemptsSinceReplay()).isEqualTo(1);
    relay.runOnce();
    clock.advance(Duration.ofMinutes(10));
    relay.runOnce();
    assertThat(outbox.find(poison.id()).orElseThrow().status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(outbox.find(poison.id()).orElseThrow().history()).extracting(OutboxAttempt::attempt)
        .containsExactly(1, 2, 3, 4, 5, 6);
  }

  @Test
  void aPermanentFailureDiesAtOnceAndTheHistoryIsBounded() throws Exception {
    OutboxEvent gone = event("payment.succeeded", "a1", 1);
    enqueueCommitted(gone);
    sink.answering(m -> DeliveryResult.permanent("HTTP 410: endpoint disabled", 410));
    relay().build().runOnce();
    assertThat(outbox.find(gone.id()).orElseThrow().status()).isEqualTo(OutboxStatus.DEAD);

    Outbox shortHistory = Outbox.builder(JdbcOutboxStore.builder(ds).table(store.table()).historyLimit(2).build())
        .clock(clock).build();
    OutboxEvent flaky = event("payment.succeeded", "a2", 2);
    enqueueCommitted(flaky);
    sink.answering(m -> DeliveryResult.retry("down", 503));
    OutboxRelay relay = OutboxRelay.builder(shortHistory).route("sink", sink, 10)
        .backoff(Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(1), Jitter.NONE)).build();
    for (int i = 0; i < 5; i++) {
      relay.runOnce();
      clock.advance(Duration.ofSeconds(1));
    }
    assertThat(shortHistory.find(flaky.id()).orElseThrow().history()).extracting(OutboxAttempt::attempt)
        .containsExactly(4, 5);
  }

  @Test
  void aRelayClaimsOnlyTheRoutesItHasTransportsFor() throws Exception {
    OutboxEvent elsewhere = OutboxEvent.builder("x").aggregate("a", "1").payload("{}").destination("else_where:q")
        .build();
    OutboxEvent likeButNot = OutboxEvent.builder("x").aggregate("a", "2").payload("{}").destination("sinkX:q").build();
    OutboxEvent bare = OutboxEvent.builder("x").aggregate("a", "3").payload("{}").destination("sink").build();
    enqueueCommitted(elsewhere, likeButNot, bare);
    assertThat(relay().build().runOnce()).as("only 'sink' and 'sink:...'").isEqualTo(1);
    assertThat(sink.sent).extracting(OutboxMessage::id).containsExactly(bare.id());
    OutboxEntry untouched = outbox.find(elsewhere.id()).orElseThrow();
    assertThat(untouched.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(untouched.attempts()).isZero();
    assertThat(untouched.leaseOwner()).isNull();
    RecordingTransport other = new RecordingTransport();
    // '_' in a route is literal, not a LIKE wildcard
    assertThat(OutboxRelay.builder(outbox).route("else_where", other).build().runOnce()).isEqualTo(1);
    assertThat(other.sent).extracting(OutboxMessage::id).containsExactly(elsewhere.id());
  }

  @Test
  void aTransportThatBreaksItsContractFailsItsOwnMessagesOnly() throws Exception {
    OutboxEvent good = OutboxEvent.builder("x").aggregate("a", "1").payload("{}").destination("sink:a").build();
    OutboxEvent broken = OutboxEvent.builder("x").aggregate("a", "2").payload("{}").destination("bad:b").build();
    enqueueCommitted(good, broken);
    OutboxTransport wrongCount = new OutboxTransport() {
      @Override
      public DeliveryResult send(OutboxMessage message) {
        return DeliveryResult.delivered();
      }

      @Override
      public List<DeliveryResult> sendAll(List<OutboxMessage> messages) {
        return List.of();
      }
    };
    relay().route("bad", wrongCount).build().runOnce();
    assertThat(outbox.find(good.id()).orElseThrow().status()).isEqualTo(OutboxStatus.DELIVERED);
    OutboxEntry failed = outbox.find(broken.id()).orElseThrow();
    assertThat(failed.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(failed.attempts()).isEqualTo(1);
    assertThat(failed.lastError()).contains("returned 0 results for 1 messages");
  }

  @Test
  void enqueueRefusesAnAutoCommitConnection() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(true);
      assertThatThrownBy(() -> outbox.enqueue(JdbcTransaction.of(c), event("x", "a", 1)))
          .isInstanceOf(IllegalStateException.class).hasMessageContaining("auto-commit");
    }
    assertThat(countRows()).isZero();
    assertThatThrownBy(() -> OutboxEvent.builder("x").header("x-bell", "ring\u0007")).isInstanceOf(
        IllegalArgumentException.class);
  }

  @Test
  void anEventInFlightCannotBeDiscarded() throws Exception {
    OutboxEvent e = event("account.updated", "acc-1", 0);
    enqueueCommitted(e);
    assertThat(claim("busy", Duration.ofSeconds(30), 10)).hasSize(1);
    assertThat(outbox.discard(e.id())).as("a relay is sending it").isFalse();
    clock.advance(Duration.ofSeconds(31));
    assertThat(outbox.discard(e.id())).as("its lease has ended").isTrue();
  }

  @Test
  void bulkReplayCommitsOnAPoolWithoutAutoCommit() throws Exception {
    OutboxEvent e = event("payment.succeeded", "a1", 1);
    enqueueCommitted(e);
    sink.answering(m -> DeliveryResult.permanent("no", 400));
    relay().build().runOnce();
    Outbox noAutoCommit = Outbox.builder(JdbcOutboxStore.builder(Databases.poolWithoutAutoCommit(dialect()))
        .table(store.table()).build()).clock(clock).build();
    assertThat(noAutoCommit.replayAll(OutboxQuery.status(OutboxStatus.DEAD))).isEqualTo(1);
    assertThat(noAutoCommit.discard(e.id())).isTrue();
    assertThat(outbox.find(e.id()).orElseThrow().status()).as("seen through another pool: committed")
        .isEqualTo(OutboxStatus.DISCARDED);
  }

  @Test
  void orderIsKeptPerDestinationSoOneFailingSubscriberDelaysNoOther() throws Exception {
    OutboxEvent a1 = OutboxEvent.builder("account.updated").aggregate("account", "acc-9").payload("{\"n\":1}")
        .destination("sink:a").build();
    OutboxEvent b1 = OutboxEvent.builder("account.updated").aggregate("account", "acc-9").payload("{\"n\":1}")
        .destination("sink:b").build();
    OutboxEvent a2 = OutboxEvent.builder("account.updated").aggregate("account", "acc-9").payload("{\"n\":2}")
        .destination("sink:a").build();
    OutboxEvent b2 = OutboxEvent.builder("account.updated").aggregate("account", "acc-9").payload("{\"n\":2}")
        .destination("sink:b").build();
    enqueueCommitted(a1, b1, a2, b2);
    sink.answering(m -> m.destination().equals("sink:a") ? DeliveryResult.permanent("gone", 410)
        : DeliveryResult.delivered());
    OutboxRelay relay = relay().build();
    for (int i = 0; i < 4; i++) {
      relay.runOnce();
    }
    assertThat(sink.sent).extracting(OutboxMessage::id).containsExactly(a1.id(), b1.id(), b2.id());
    assertThat(outbox.find(a2.id()).orElseThrow().status()).as("parked behind its dead head").isEqualTo(
        OutboxStatus.PENDING);
  }

  @Test
  void aRelayThatLostItsLeaseRecordsNoFailure() throws Exception {
    OutboxEvent e = event("payment.succeeded", "a1", 1);
    enqueueCommitted(e);
    List<ClaimedEvent> stale = claim("slow-relay", Duration.ofSeconds(30), 10);
    clock.advance(Duration.ofSeconds(31));
    List<ClaimedEvent> fresh = claim("new-owner", Duration.ofSeconds(30), 10);
    assertThat(fresh).hasSize(1);
    FailedDelivery late = new FailedDelivery(stale.get(0), DeliveryResult.retry("late", 500), false,
        clock.instant().plusSeconds(5));
    assertThat(finish("slow-relay", List.of(), List.of(late))).isZero();
    OutboxEntry entry = outbox.find(e.id()).orElseThrow();
    assertThat(entry.history()).as("no history row from the relay that lost the lease").isEmpty();
    assertThat(entry.leaseOwner()).isEqualTo("new-owner");
    FailedDelivery own = new FailedDelivery(fresh.get(0), DeliveryResult.retry("own", 503), false,
        clock.instant().plusSeconds(5));
    assertThat(finish("new-owner", List.of(), List.of(own))).isEqualTo(1);
    assertThat(outbox.find(e.id()).orElseThrow().history()).extracting(OutboxAttempt::error).containsExactly("own");
  }

  @Test
  void bulkReplayAndDiscardFollowTheFilter() throws Exception {
    List<OutboxEvent> events = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      events.add(event(i % 2 == 0 ? "payment.succeeded" : "refund.succeeded", "a" + i, i));
    }
    enqueueCommitted(events.toArray(new OutboxEvent[0]));
    sink.answering(m -> DeliveryResult.permanent("no", 400));
    relay().build().runOnce();
    assertThat(outbox.stats().count(OutboxStatus.DEAD)).isEqualTo(7);

    OutboxPage page1 = outbox.list(OutboxQuery.status(OutboxStatus.DEAD).limit(3));
    assertThat(page1.entries()).hasSize(3);
    OutboxPage page2 = outbox.list(OutboxQuery.status(OutboxStatus.DEAD).limit(3)
        .after(page1.nextCursor().getAsLong()));
    OutboxPage page3 = outbox.list(OutboxQuery.status(OutboxStatus.DEAD).limit(3)
        .after(page2.nextCursor().getAsLong()));
    assertThat(page3.entries()).hasSize(1);
    assertThat(page3.nextCursor()).isEmpty();
    Set<UUID> seen = new HashSet<>();
    for (OutboxPage p : List.of(page1, page2, page3)) {
      p.entries().forEach(x -> seen.add(x.id()));
    }
    assertThat(seen).hasSize(7);

    assertThat(outbox.discard(events.get(0).id())).isTrue();
    assertThat(outbox.discard(events.get(0).id())).isFalse();
    int replayed = outbox.replayAll(OutboxQuery.status(OutboxStatus.DEAD).type("payment.succeeded").limit(2));
    assertThat(replayed).as("payments 2, 4, 6; payment 0 was discarded").isEqualTo(3);
    assertThat(outbox.stats().count(OutboxStatus.PENDING)).isEqualTo(3);
    assertThat(outbox.stats().count(OutboxStatus.DEAD)).isEqualTo(3);
    assertThat(outbox.stats().count(OutboxStatus.DISCARDED)).isEqualTo(1);
    assertThat(outbox.stats().oldestPendingAge()).contains(Duration.ZERO);
    assertThatThrownBy(() -> outbox.replayAll(OutboxQuery.all())).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void purgeRemovesOnlyFinishedEventsPastRetentionWithTheirHistory() throws Exception {
    OutboxEvent flaky = event("payment.succeeded", "a1", 1);
    OutboxEvent ok = event("payment.succeeded", "a2", 2);
    OutboxEvent dead = event("payment.succeeded", "a3", 3);
    enqueueCommitted(flaky, ok, dead);
    sink.answering(m -> m.id().equals(dead.id()) ? DeliveryResult.permanent("no", 400)
        : m.id().equals(flaky.id()) && m.attempt() == 1 ? DeliveryResult.retry("once", 500)
        : DeliveryResult.delivered());
    OutboxRelay relay = relay().build();
    relay.runOnce();
    clock.advance(Duration.ofSeconds(1));
    relay.runOnce();
    assertThat(outbox.find(flaky.id()).orElseThrow().status()).isEqualTo(OutboxStatus.DELIVERED);
    OutboxEvent fresh = event("payment.succeeded", "a4", 4);
    enqueueCommitted(fresh);

    assertThat(outbox.purgeAll(Duration.ofDays(1), 1)).as("nothing is a day old").isZero();
    clock.advance(Duration.ofDays(1));
    assertThat(outbox.purgeAll(Duration.ofDays(1), 1)).isEqualTo(2);
    assertThat(outbox.find(flaky.id())).isEmpty();
    assertThat(outbox.find(ok.id())).isEmpty();
    assertThat(outbox.find(dead.id())).isPresent();
    assertThat(outbox.find(fresh.id())).isPresent();
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + store.table() + "_attempt");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      assertThat(rs.getInt(1)).as("only the dead event's attempt is left").isEqualTo(1);
    }
  }

  @Test
  void deleteDeliveredLeavesNoRow() throws Exception {
    enqueueCommitted(event("payment.succeeded", "a1", 1), event("payment.succeeded", "a2", 2));
    relay().deleteDelivered(true).build().runOnce();
    assertThat(countRows()).isZero();
    assertThat(sink.sent).hasSize(2);
  }

  @Test
  void anOrderedAggregateSendsOneEventAtATimeInOrderUnderRetries() throws Exception {
    List<OutboxEvent> events = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      events.add(event("account.updated", "acc-1", i));
      events.add(event("account.updated", "acc-2", i));
    }
    enqueueCommitted(events.toArray(new OutboxEvent[0]));
    // every other attempt fails, so order must survive retries
    AtomicInteger calls = new AtomicInteger();
    sink.answering(m -> calls.incrementAndGet() % 2 == 0 ? DeliveryResult.retry("flaky", 500)
        : DeliveryResult.delivered());
    OutboxRelay relay = relay().build();
    for (int round = 0; round < 40 && outbox.stats().count(OutboxStatus.PENDING) > 0; round++) {
      relay.runOnce();
      clock.advance(Duration.ofMinutes(10));
    }
    assertThat(outbox.stats().count(OutboxStatus.DELIVERED)).isEqualTo(8);
    for (String acc : List.of("acc-1", "acc-2")) {
      List<String> deliveredOrder = new ArrayList<>();
      List<String> attempts = new ArrayList<>();
      synchronized (sink.sent) {
        for (OutboxMessage m : sink.sent) {
          if (m.aggregateId().equals(acc)) {
            attempts.add(m.payload());
          }
        }
      }
      // attempts of an aggregate never go back to an older event once a newer one was tried
      for (String p : attempts) {
        if (deliveredOrder.isEmpty() || !deliveredOrder.get(deliveredOrder.size() - 1).equals(p)) {
          deliveredOrder.add(p);
        }
      }
      assertThat(deliveredOrder).containsExactly("{\"n\":0}", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
    }
  }

  @Test
  void aDeadHeadParksItsAggregateUntilAnOperatorActs() throws Exception {
    OutboxEvent head = event("account.updated", "acc-1", 0);
    OutboxEvent second = event("account.updated", "acc-1", 1);
    OutboxEvent third = event("account.updated", "acc-1", 2);
    OutboxEvent other = event("account.updated", "acc-2", 0);
    OutboxEvent unordered = event("payment.succeeded", "acc-1", 9);
    enqueueCommitted(head, second, third, other, unordered);
    sink.answering(m -> m.id().equals(head.id()) ? DeliveryResult.permanent("rejected", 422)
        : DeliveryResult.delivered());
    OutboxRelay relay = relay().build();
    for (int i = 0; i < 5; i++) {
      relay.runOnce();
      clock.advance(Duration.ofSeconds(5));
    }
    assertThat(sink.sent).extracting(OutboxMessage::id).as("the parked aggregate sends nothing after its head")
        .containsExactlyInAnyOrder(head.id(), other.id(), unordered.id());
    assertThat(outbox.find(second.id()).orElseThrow().status()).isEqualTo(OutboxStatus.PENDING);

    // replaying the head sends it, then the rest in order
    sink.answering(m -> DeliveryResult.delivered());
    outbox.replay(head.id());
    for (int i = 0; i < 5; i++) {
      relay.runOnce();
    }
    List<UUID> tail = sink.sent.subList(3, sink.sent.size()).stream().map(OutboxMessage::id).toList();
    assertThat(tail).containsExactly(head.id(), second.id(), third.id());

    // a discarded dead head lets the aggregate move on too
    OutboxEvent h2 = event("account.updated", "acc-3", 0);
    OutboxEvent n2 = event("account.updated", "acc-3", 1);
    enqueueCommitted(h2, n2);
    sink.answering(m -> m.id().equals(h2.id()) ? DeliveryResult.permanent("rejected", 422)
        : DeliveryResult.delivered());
    relay.runOnce();
    relay.runOnce();
    assertThat(outbox.find(n2.id()).orElseThrow().status()).isEqualTo(OutboxStatus.PENDING);
    outbox.discard(h2.id());
    relay.runOnce();
    assertThat(outbox.find(n2.id()).orElseThrow().status()).isEqualTo(OutboxStatus.DELIVERED);
  }

  @Test
  void concurrentClaimsNeverShareARow() throws Exception {
    List<OutboxEvent> events = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      events.add(event("payment.succeeded", "a" + i, i));
    }
    enqueueCommitted(events.toArray(new OutboxEvent[0]));
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    ConcurrentLinkedQueue<Long> claimed = new ConcurrentLinkedQueue<>();
    List<Future<?>> futures = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      futures.add(pool.submit(() -> {
        start.await();
        // bounded: a claim may come back short while others hold rows, so loop until all 400 are taken
        for (int round = 0; round < 2000 && claimed.size() < 400; round++) {
          for (ClaimedEvent c : claim("relay-" + id + "-" + round, Duration.ofMinutes(1), 7)) {
            claimed.add(c.seq());
          }
        }
        return null;
      }));
    }
    start.countDown();
    for (Future<?> f : futures) {
      f.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    assertThat(new HashSet<>(claimed)).as("no row claimed twice").hasSize(claimed.size());
    assertThat(claimed).hasSize(400);
  }

  @Test
  void anExpiredLeaseIsTakenOverAndTheOldHolderCannotMarkIt() throws Exception {
    OutboxEvent e = event("payment.succeeded", "a1", 1);
    enqueueCommitted(e);
    List<ClaimedEvent> first = claim("dead-relay", Duration.ofSeconds(30), 10);
    assertThat(first).hasSize(1);
    assertThat(claim("other", Duration.ofSeconds(30), 10)).as("held by a live lease").isEmpty();
    clock.advance(Duration.ofSeconds(31));
    List<ClaimedEvent> second = claim("other", Duration.ofSeconds(30), 10);
    assertThat(second).singleElement().satisfies(c -> assertThat(c.message().id()).isEqualTo(e.id()));
    assertThat(finish("dead-relay", first, List.of())).as("fenced by the lease owner").isZero();
    assertThat(finish("other", second, List.of())).isEqualTo(1);
  }
}
