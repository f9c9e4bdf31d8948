package dev.idem.jdbc.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.StoreException;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxListener;
import dev.idem.outbox.InboxPayloadMismatchException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.outbox.spi.InboxTransactions;
import dev.idem.test.Eventually;
import dev.idem.test.MutableClock;
import dev.idem.test.TestPostgres;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What every database must do for the inbox: one effect per (consumer, event id) whatever the redeliveries, in the
 * caller's transaction; the kept result for duplicates; a typed refusal for the same id with another payload.
 */
abstract class InboxContract {
  protected final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
  protected HikariDataSource ds;
  protected JdbcInboxStore store;
  protected Inbox inbox;
  protected String effects;
  /** A table with a unique key, for handlers that insert and ignore a duplicate. */
  protected String once;
  protected final AtomicInteger duplicates = new AtomicInteger();
  protected final AtomicInteger mismatches = new AtomicInteger();
  protected final AtomicInteger processed = new AtomicInteger();

  abstract JdbcDialect dialect();

  @BeforeEach
  void setUp() throws SQLException {
    ds = Databases.pool(dialect());
    String suffix = getClass().getSimpleName().substring(0, 2).toLowerCase();
    Databases.freshTables(dialect(), "obi_" + suffix, "ibi_" + suffix);
    effects = "ibi_effect_" + suffix;
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + effects);
      st.execute("CREATE TABLE " + effects + " (event_id VARCHAR(255) NOT NULL, amount INTEGER NOT NULL)");
      once = effects + "_once";
      st.execute("DROP TABLE IF EXISTS " + once);
      st.execute("CREATE TABLE " + once + " (event_id VARCHAR(255) NOT NULL PRIMARY KEY)");
    }
    store = JdbcInboxStore.builder(ds).table("ibi_" + suffix).build();
    inbox = Inbox.builder(store).clock(clock).listener(new InboxListener() {
      @Override
      public void processed(String consumer) {
        processed.incrementAndGet();
      }

      @Override
      public void duplicate(String consumer) {
        duplicates.incrementAndGet();
      }

      @Override
      public void payloadMismatch(String consumer, String eventId) {
        mismatches.incrementAndGet();
      }
    }).build();
  }

  /** The connection of a JDBC store's transaction: where a handler writes its effect. */
  static Connection connection(StoreTransaction tx) {
    return tx.unwrap(Connection.class);
  }

  /** Writes the effect of {@code eventId} on {@code c}; returns the result a handler keeps for it. */
  String apply(Connection c, String eventId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " (event_id, amount) VALUES (?, 1)")) {
      ps.setString(1, eventId);
      ps.executeUpdate();
    }
    return "applied " + eventId;
  }

  /** The handler that writes each event's effect in the inbox's transaction. */
  InboxHandler effect() {
    return (tx, event) -> apply(connection(tx), event.eventId());
  }

  int effectCount(String eventId) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + effects + " WHERE event_id = ?")) {
      ps.setString(1, eventId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  InboxResult processCommitted(String consumer, String eventId, String payload) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      InboxResult r = inbox.process(JdbcTransaction.of(c), consumer, event(eventId, payload), effect());
      c.commit();
      return r;
    }
  }

  /** {@code event} processed in a transaction the inbox opens and commits (rolls back when the call throws). */
  static InboxResult inInboxTransaction(Inbox on, String consumer, InboxEvent event, InboxHandler handler)
      throws Exception {
    return on.inTransaction(tx -> on.process(tx, consumer, event, handler));
  }

  /** A batch processed for "billing" in a transaction the inbox opens and commits (rolls back when it throws). */
  List<InboxResult> batchInInboxTransaction(List<InboxEvent> events, InboxHandler handler) throws Exception {
    return inbox.inTransaction(tx -> inbox.processBatch(tx, "billing", events, handler));
  }

  @Test
  void aRedeliveryIsSkippedAndGetsTheKeptResult() throws Exception {
    String id = UUID.randomUUID().toString();
    InboxResult first = processCommitted("billing", id, "{\"a\":1}");
    assertThat(first.duplicate()).isFalse();
    assertThat(first.result()).isEqualTo("applied " + id);
    clock.advance(Duration.ofMinutes(3));
    InboxResult again = processCommitted("billing", id, "{\"a\":1}");
    assertThat(again.duplicate()).isTrue();
    assertThat(again.result()).isEqualTo("applied " + id);
    assertThat(again.firstReceivedAt()).isEqualTo(first.firstReceivedAt());
    assertThat(effectCount(id)).isEqualTo(1);
    assertThat(duplicates).hasValue(1);
    assertThat(inbox.contains("billing", id)).isTrue();
  }

  @Test
  void consumersAreIndependent() throws Exception {
    String id = UUID.randomUUID().toString();
    processCommitted("billing", id, "{}");
    assertThat(processCommitted("shipping", id, "{}").duplicate()).isFalse();
    assertThat(effectCount(id)).isEqualTo(2);
  }

  @Test
  void aRolledBackEffectLeavesNoRecordSoTheRetryRunsIt() throws Exception {
    String id = UUID.randomUUID().toString();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.process(JdbcTransaction.of(c), "billing", event(id, "{}"), (tx, event) -> {
        apply(connection(tx), id);
        throw new IllegalStateException("downstream refused");
      })).isInstanceOf(InboxHandlerException.class).hasRootCauseMessage("downstream refused");
      c.rollback();
    }
    assertThat(inbox.contains("billing", id)).isFalse();
    assertThat(processCommitted("billing", id, "{}").duplicate()).isFalse();
    assertThat(effectCount(id)).isEqualTo(1);
  }

  @Test
  void theSameIdWithAnotherPayloadIsRefused() throws Exception {
    String id = UUID.randomUUID().toString();
    processCommitted("billing", id, "{\"amount\":100}");
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.process(JdbcTransaction.of(c), "billing", event(id, "{\"amount\":999}"),
          effect()))
          .isInstanceOf(InboxPayloadMismatchException.class)
          .satisfies(e -> assertThat(((InboxPayloadMismatchException) e).eventId()).isEqualTo(id));
      c.rollback();
    }
    assertThat(mismatches).hasValue(1);
    assertThat(effectCount(id)).isEqualTo(1);
  }

  @Test
  void concurrentDeliveriesOfOneEventHaveOneEffect() throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 25; round++) {
        String id = "evt-" + round + "-" + UUID.randomUUID();
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<Future<InboxResult>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          results.add(pool.submit(() -> {
            barrier.await(10, TimeUnit.SECONDS);
            return inInboxTransaction(inbox, "billing",
                new InboxEvent(id, "test", "{\"x\":1}".getBytes(StandardCharsets.UTF_8)), effect());
          }));
        }
        int fresh = 0;
        for (Future<InboxResult> f : results) {
          InboxResult r = f.get(60, TimeUnit.SECONDS);
          fresh += r.duplicate() ? 0 : 1;
          assertThat(r.result()).isEqualTo("applied " + id);
        }
        assertThat(fresh).as("round %d: exactly one delivery ran the handler", round).isEqualTo(1);
        assertThat(effectCount(id)).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aConcurrentDeliveryWaitsForARollbackAndThenRunsItself() throws Exception {
    String id = UUID.randomUUID().toString();
    CountDownLatch firstInserted = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      AtomicLong firstSession = new AtomicLong();
      Future<?> first = pool.submit(() -> {
        try (Connection c = ds.getConnection()) {
          c.setAutoCommit(false);
          try {
            inbox.process(JdbcTransaction.of(c), "billing", event(id, "{}"), (tx, event) -> {
              firstSession.set(sessionId(connection(tx)));
              firstInserted.countDown();
              releaseFirst.await(30, TimeUnit.SECONDS);
              throw new IllegalStateException("crash before commit");
            });
          } catch (InboxHandlerException expected) {
            c.rollback();
          }
        }
        return null;
      });
      assertThat(firstInserted.await(30, TimeUnit.SECONDS)).isTrue();
      CompletableFuture<Long> secondSession = new CompletableFuture<>();
      Inbox secondInbox = inboxReporting(secondSession);
      Future<InboxResult> second = pool.submit(() -> inInboxTransaction(secondInbox, "billing", event(id, "{}"),
          effect()));
      awaitBlockedOn(firstSession.get(), secondSession.get(30, TimeUnit.SECONDS), id, second);
      releaseFirst.countDown();
      first.get(30, TimeUnit.SECONDS);
      assertThat(second.get(30, TimeUnit.SECONDS).duplicate()).isFalse();
      assertThat(effectCount(id)).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void purgeRemovesOldRecordsOnly() throws Exception {
    String old = UUID.randomUUID().toString();
    processCommitted("billing", old, "{}");
    clock.advance(Duration.ofDays(8));
    String recent = UUID.randomUUID().toString();
    processCommitted("billing", recent, "{}");
    assertThat(inbox.purge(Duration.ofDays(7), 100)).isEqualTo(1);
    assertThat(inbox.contains("billing", old)).isFalse();
    assertThat(inbox.contains("billing", recent)).isTrue();
  }

  @Test
  void badInputIsRefusedBeforeAnyWrite() throws Exception {
    try (Connection c = ds.getConnection()) {
      StoreTransaction tx = JdbcTransaction.of(c);
      assertThatThrownBy(() -> inbox.process(tx, "billing", event("x", "{}"), effect()))
          .as("auto-commit on").isInstanceOf(IllegalStateException.class).hasMessageContaining("auto-commit");
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.process(tx, "billing", event("x".repeat(256), "{}"), effect()))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> inbox.process(tx, "", event("x", "{}"), effect()))
          .isInstanceOf(IllegalArgumentException.class);
      assertThatThrownBy(() -> inbox.process(tx, "billing", event("big", "{}"), (t, event) -> "r".repeat(5000)))
          .isInstanceOf(InboxHandlerException.class).hasMessageContaining("at most 4000");
      c.rollback();
    }
    assertThat(inbox.contains("billing", "big")).isFalse();
  }

  @Test
  void anErrorInTheHandlerCommitsNothing() throws Exception {
    String id = UUID.randomUUID().toString();
    assertThatThrownBy(() -> inInboxTransaction(inbox, "billing", event(id, "{}"), (tx, event) -> {
      apply(connection(tx), id);
      throw new AssertionError("a handler bug");
    })).isInstanceOf(AssertionError.class);
    assertThat(inbox.contains("billing", id)).as("no inbox row").isFalse();
    assertThat(effectCount(id)).as("no half effect").isZero();
  }

  // ---- batches ----

  static InboxEvent event(String eventId, String payload) {
    return InboxEvent.of(eventId, payload.getBytes(StandardCharsets.UTF_8));
  }

  static List<InboxEvent> events(String... eventIds) {
    return Arrays.stream(eventIds).map(id -> event(id, "{\"id\":\"" + id + "\"}"))
        .collect(Collectors.toCollection(ArrayList::new));
  }

  static String[] ids(int n) {
    String run = UUID.randomUUID().toString().substring(0, 8);
    String[] ids = new String[n];
    for (int i = 0; i < n; i++) {
      ids[i] = "e" + i + "-" + run;
    }
    return ids;
  }

  /** The effect of {@link #effect} per event, remembering the order the handler saw the events in. */
  InboxHandler eventEffect(List<String> ran) {
    return (tx, event) -> {
      ran.add(event.eventId());
      return apply(connection(tx), event.eventId());
    };
  }

  /** The effects of a batch's new events, applied in one call. */
  @FunctionalInterface
  interface Bulk {
    List<String> handle(Connection c, List<InboxEvent> fresh) throws Exception;
  }

  /**
   * A handler that overrides {@link InboxHandler#handleAll} to apply the new events of a batch at once (what the
   * batch handler of {@code processBatchAtOnce} was); it fails the test if the inbox asks it for one event alone.
   */
  static InboxHandler atOnce(Bulk bulk) {
    return new InboxHandler() {
      @Override
      public String handle(StoreTransaction tx, InboxEvent event) {
        throw new AssertionError("a handler that handles all new events at once was asked for " + event.eventId());
      }

      @Override
      public List<String> handleAll(StoreTransaction tx, List<InboxEvent> fresh) throws Exception {
        return bulk.handle(connection(tx), fresh);
      }
    };
  }

  List<InboxResult> batchCommitted(List<InboxEvent> events, InboxHandler handler) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      List<InboxResult> r = inbox.processBatch(JdbcTransaction.of(c), "billing", events, handler);
      c.commit();
      return r;
    }
  }

  List<InboxResult> bulkCommitted(List<InboxEvent> events, Bulk bulk) throws SQLException {
    return batchCommitted(events, atOnce(bulk));
  }

  static List<Boolean> duplicateFlags(List<InboxResult> results) {
    return results.stream().map(InboxResult::duplicate).collect(Collectors.toList());
  }

  static List<String> resultTexts(List<InboxResult> results) {
    return results.stream().map(InboxResult::result).collect(Collectors.toList());
  }

  long inboxCount(String where) throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + store.table() + " WHERE " + where)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void aBatchOfNewEventsIsProcessedOnceAndItsResultsAreKept() throws Exception {
    String[] ids = ids(5);
    List<String> ran = new ArrayList<>();

    List<InboxResult> results = batchCommitted(events(ids), eventEffect(ran));

    assertThat(duplicateFlags(results)).containsOnly(false).hasSize(5);
    assertThat(resultTexts(results))
        .containsExactly(Arrays.stream(ids).map(id -> "applied " + id).toArray(String[]::new));
    assertThat(results).extracting(InboxResult::firstReceivedAt).containsOnly(clock.instant());
    assertThat(ran).containsExactly(ids);
    for (String id : ids) {
      assertThat(effectCount(id)).isEqualTo(1);
    }
    assertThat(processed).hasValue(5);
    assertThat(inboxCount("processed_at IS NULL")).as("processed_at is set by the insert").isZero();

    clock.advance(Duration.ofMinutes(3));
    InboxResult single = processCommitted("billing", ids[2], "{\"id\":\"" + ids[2] + "\"}");
    List<InboxResult> again = batchCommitted(events(ids), eventEffect(ran));

    assertThat(single.duplicate()).isTrue();
    assertThat(single.result()).isEqualTo("applied " + ids[2]);
    assertThat(single.firstReceivedAt()).isEqualTo(results.get(2).firstReceivedAt());
    assertThat(again).isEqualTo(results.stream().map(r -> new InboxResult(true, r.result(), r.firstReceivedAt()))
        .collect(Collectors.toList()));
    assertThat(ran).hasSize(5);
    for (String id : ids) {
      assertThat(effectCount(id)).isEqualTo(1);
    }
    assertThat(duplicates).hasValue(6);
  }

  @Test
  void aBatchMixingNewAndProcessedIdsRunsTheHandlerForTheNewOnesInTheGivenOrder() throws Exception {
    String[] ids = ids(6);
    processCommitted("billing", ids[1], "{\"id\":\"" + ids[1] + "\"}");
    processCommitted("billing", ids[4], "{\"id\":\"" + ids[4] + "\"}");
    List<String> ran = new ArrayList<>();

    List<InboxEvent> batch = events(ids[5], ids[4], ids[0], ids[1], ids[3], ids[2]);

    List<InboxResult> results = batchCommitted(batch, eventEffect(ran));

    assertThat(duplicateFlags(results)).containsExactly(false, true, false, true, false, false);
    assertThat(ran).containsExactly(ids[5], ids[0], ids[3], ids[2]);
    assertThat(resultTexts(results)).containsExactly("applied " + ids[5], "applied " + ids[4], "applied " + ids[0],
        "applied " + ids[1], "applied " + ids[3], "applied " + ids[2]);
    for (String id : ids) {
      assertThat(effectCount(id)).isEqualTo(1);
    }
    assertThat(duplicates).hasValue(2);
  }

  @Test
  void anIdTwiceInOneBatchWithTheSamePayloadIsADuplicateOfItsFirstOccurrence() throws Exception {
    String[] ids = ids(2);
    List<String> ran = new ArrayList<>();

    List<InboxResult> results = batchCommitted(events(ids[0], ids[1], ids[0]), eventEffect(ran));

    assertThat(duplicateFlags(results)).containsExactly(false, false, true);
    assertThat(results.get(2)).isEqualTo(new InboxResult(true, "applied " + ids[0], results.get(0).firstReceivedAt()));
    assertThat(ran).containsExactly(ids[0], ids[1]);
    assertThat(effectCount(ids[0])).isEqualTo(1);
    assertThat(duplicates).hasValue(1);
  }

  @Test
  void anIdTwiceInOneBatchWithAnotherPayloadIsRefusedBeforeAnyHandlerRuns() throws Exception {
    String[] ids = ids(2);
    List<String> ran = new ArrayList<>();
    List<InboxEvent> batch = List.of(event(ids[0], "{\"amount\":100}"), event(ids[1], "{}"),
        event(ids[0], "{\"amount\":999}"));

    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.processBatch(JdbcTransaction.of(c), "billing", batch, eventEffect(ran)))
          .isInstanceOf(InboxPayloadMismatchException.class)
          .satisfies(e -> assertThat(((InboxPayloadMismatchException) e).eventId()).isEqualTo(ids[0]));
      c.rollback();
    }

    assertThat(ran).isEmpty();
    assertThat(mismatches).hasValue(1);
    assertThat(inbox.contains("billing", ids[0])).isFalse();
    assertThat(inbox.contains("billing", ids[1])).isFalse();
  }

  @Test
  void aBatchWithAnIdStoredUnderAnotherPayloadIsRefusedAndLeavesNothingAfterRollback() throws Exception {
    String[] ids = ids(3);
    processCommitted("billing", ids[1], "{\"amount\":100}");
    List<String> ran = new ArrayList<>();
    List<InboxEvent> batch = List.of(event(ids[0], "{}"), event(ids[1], "{\"amount\":999}"), event(ids[2], "{}"));

    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.processBatch(JdbcTransaction.of(c), "billing", batch, eventEffect(ran)))
          .isInstanceOf(InboxPayloadMismatchException.class)
          .satisfies(e -> assertThat(((InboxPayloadMismatchException) e).eventId()).isEqualTo(ids[1]));
      c.rollback();
    }

    assertThat(ran).isEmpty();
    assertThat(mismatches).hasValue(1);
    assertThat(inbox.contains("billing", ids[0])).isFalse();
    assertThat(inbox.contains("billing", ids[2])).isFalse();
    assertThat(effectCount(ids[1])).isEqualTo(1);
  }

  @Test
  void aHandlerFailureOnTheThirdEventNamesItAndARetryProcessesAll() throws Exception {
    String[] ids = ids(5);
    List<String> ran = new ArrayList<>();
    InboxHandler failsOnThird = (tx, event) -> {
      String r = eventEffect(ran).handle(tx, event);
      if (event.eventId().equals(ids[2])) {
        throw new IllegalStateException("downstream refused");
      }
      return r;
    };

    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.processBatch(JdbcTransaction.of(c), "billing", events(ids), failsOnThird))
          .isInstanceOf(InboxHandlerException.class)
          .hasMessageContaining(ids[2]).hasRootCauseMessage("downstream refused")
          .satisfies(e -> assertThat(((InboxHandlerException) e).eventId()).isEqualTo(ids[2]));
      c.rollback();
    }

    assertThat(ran).containsExactly(ids[0], ids[1], ids[2]);
    for (String id : ids) {
      assertThat(inbox.contains("billing", id)).isFalse();
      assertThat(effectCount(id)).isZero();
    }

    List<InboxResult> retry = batchInInboxTransaction(events(ids), eventEffect(ran));

    assertThat(duplicateFlags(retry)).containsOnly(false).hasSize(5);
    for (String id : ids) {
      assertThat(effectCount(id)).isEqualTo(1);
    }
  }

  @Test
  void anErrorInABatchHandlerCommitsNothing() throws Exception {
    String[] ids = ids(3);
    InboxHandler bug = (tx, event) -> {
      apply(connection(tx), event.eventId());
      if (event.eventId().equals(ids[1])) {
        throw new AssertionError("a handler bug");
      }
      return null;
    };

    assertThatThrownBy(() -> batchInInboxTransaction(events(ids), bug))
        .isInstanceOf(AssertionError.class);

    for (String id : ids) {
      assertThat(inbox.contains("billing", id)).as("no inbox row").isFalse();
      assertThat(effectCount(id)).as("no half effect").isZero();
    }
  }

  @Test
  void aBatchHandlerGetsTheNewEventsInOneCall() throws Exception {
    String[] ids = ids(4);
    processCommitted("billing", ids[1], "{\"id\":\"" + ids[1] + "\"}");
    List<List<String>> calls = new ArrayList<>();
    Bulk bulk = (c, fresh) -> {
      calls.add(fresh.stream().map(InboxEvent::eventId).collect(Collectors.toList()));
      try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + effects + " (event_id, amount) VALUES (?, 1)")) {
        for (InboxEvent e : fresh) {
          ps.setString(1, e.eventId());
          ps.addBatch();
        }
        ps.executeBatch();
      }
      return fresh.stream().map(e -> "bulk " + e.eventId()).collect(Collectors.toList());
    };

    List<InboxResult> results = bulkCommitted(events(ids[3], ids[1], ids[0], ids[2]), bulk);
    List<InboxResult> again = bulkCommitted(events(ids[0], ids[3]), bulk);

    assertThat(calls).containsExactly(List.of(ids[3], ids[0], ids[2]));
    assertThat(duplicateFlags(results)).containsExactly(false, true, false, false);
    assertThat(resultTexts(results))
        .containsExactly("bulk " + ids[3], "applied " + ids[1], "bulk " + ids[0], "bulk " + ids[2]);
    assertThat(duplicateFlags(again)).containsExactly(true, true);
    assertThat(resultTexts(again)).containsExactly("bulk " + ids[0], "bulk " + ids[3]);
    for (String id : ids) {
      assertThat(effectCount(id)).isEqualTo(1);
    }
    assertThat(processed).hasValue(1 + 3);
  }

  @Test
  void aBatchHandlerReturningNullKeepsNoResults() throws Exception {
    String[] ids = ids(2);
    Bulk noResults = (c, fresh) -> null;

    List<InboxResult> results = bulkCommitted(events(ids), noResults);
    List<InboxResult> again = bulkCommitted(events(ids), noResults);

    assertThat(resultTexts(results)).containsExactly(null, null);
    assertThat(duplicateFlags(again)).containsExactly(true, true);
    assertThat(resultTexts(again)).containsExactly(null, null);
  }

  @Test
  void aBatchHandlerReturningTheWrongNumberOfResultsFailsTheBatch() throws Exception {
    String[] ids = ids(3);
    processCommitted("billing", ids[0], "{\"id\":\"" + ids[0] + "\"}");
    Bulk oneShort = (c, fresh) -> List.of("only one");

    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.processBatch(JdbcTransaction.of(c), "billing", events(ids), atOnce(oneShort)))
          .isInstanceOf(InboxHandlerException.class)
          .hasMessageContaining("returned 1 results for 2 new events")
          .satisfies(e -> assertThat(((InboxHandlerException) e).eventId()).isEqualTo(ids[1]));
      c.rollback();
    }

    assertThat(inbox.contains("billing", ids[1])).isFalse();
    assertThat(inbox.contains("billing", ids[2])).isFalse();
  }

  @Test
  void aFailingBatchHandlerNamesTheBatchsFirstNewEvent() throws Exception {
    String[] ids = ids(3);
    processCommitted("billing", ids[0], "{\"id\":\"" + ids[0] + "\"}");
    Bulk refused = (c, fresh) -> {
      for (InboxEvent e : fresh) {
        apply(c, e.eventId());
      }
      throw new IllegalStateException("bulk write refused");
    };

    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.processBatch(JdbcTransaction.of(c), "billing", events(ids), atOnce(refused)))
          .isInstanceOf(InboxHandlerException.class).hasRootCauseMessage("bulk write refused")
          .satisfies(e -> assertThat(((InboxHandlerException) e).eventId()).isEqualTo(ids[1]));
      c.rollback();
    }

    assertThat(inbox.contains("billing", ids[1])).isFalse();
    assertThat(inbox.contains("billing", ids[2])).isFalse();
    assertThat(effectCount(ids[2])).isZero();
  }

  @Test
  void concurrentOverlappingBatchesInAnyOrderGiveEachEventOneEffect() throws Exception {
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 50; round++) {
        List<String> ids = List.of(ids(12));
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<List<InboxEvent>> batches = new ArrayList<>();
        List<Future<List<InboxResult>>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          Random random = new Random(round * threads + t);
          List<String> mine = new ArrayList<>(ids);
          Collections.shuffle(mine, random);
          List<InboxEvent> batch = events(mine.subList(0, 8 + random.nextInt(5)).toArray(String[]::new));
          batches.add(batch);
          futures.add(pool.submit(() -> {
            barrier.await(10, TimeUnit.SECONDS);
            return batchInInboxTransaction(batch, eventEffect(Collections.synchronizedList(new ArrayList<>())));
          }));
        }

        Map<String, Integer> fresh = new HashMap<>();
        for (int t = 0; t < threads; t++) {
          List<InboxResult> results = futures.get(t).get(60, TimeUnit.SECONDS);
          for (int k = 0; k < results.size(); k++) {
            String id = batches.get(t).get(k).eventId();
            fresh.merge(id, results.get(k).duplicate() ? 0 : 1, Integer::sum);
            assertThat(results.get(k).result()).isEqualTo("applied " + id);
          }
        }

        for (String id : ids) {
          int expected = fresh.containsKey(id) ? 1 : 0;
          assertThat(fresh.getOrDefault(id, 0)).as("round %d, %s: handler runs", round, id).isEqualTo(expected);
          assertThat(effectCount(id)).as("round %d, %s: effects", round, id).isEqualTo(expected);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aConcurrentBatchWaitsForARollbackAndThenProcessesTheEvent() throws Exception {
    String[] ids = ids(2);
    CountDownLatch firstInserted = new CountDownLatch(1);
    CountDownLatch releaseFirst = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      AtomicLong firstSession = new AtomicLong();
      Future<?> first = pool.submit(() -> {
        try (Connection c = ds.getConnection()) {
          c.setAutoCommit(false);
          InboxHandler crashes = (tx, event) -> {
            firstSession.set(sessionId(connection(tx)));
            firstInserted.countDown();
            releaseFirst.await(30, TimeUnit.SECONDS);
            throw new IllegalStateException("crash before commit");
          };
          try {
            inbox.processBatch(JdbcTransaction.of(c), "billing", events(ids[1]), crashes);
          } catch (InboxHandlerException expected) {
            c.rollback();
          }
        }
        return null;
      });
      assertThat(firstInserted.await(30, TimeUnit.SECONDS)).isTrue();

      CompletableFuture<Long> secondSession = new CompletableFuture<>();
      Inbox secondInbox = inboxReporting(secondSession);
      Future<List<InboxResult>> second = pool.submit(() -> secondInbox.inTransaction(tx -> secondInbox.processBatch(tx,
          "billing", events(ids), eventEffect(new ArrayList<>()))));
      // the second must be waiting for the first's lock on ids[1] before the first rolls back, or this tests nothing
      awaitBlockedOn(firstSession.get(), secondSession.get(30, TimeUnit.SECONDS), ids[1], second);
      releaseFirst.countDown();
      first.get(30, TimeUnit.SECONDS);

      assertThat(duplicateFlags(second.get(30, TimeUnit.SECONDS))).containsExactly(false, false);
      assertThat(effectCount(ids[0])).isEqualTo(1);
      assertThat(effectCount(ids[1])).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aBatchReadsItsRecordedEventsWithoutWaitingForAnotherTransactionsNewOne() throws Exception {
    String[] ids = ids(13);
    batchCommitted(events(Arrays.copyOfRange(ids, 0, 12)), (tx, event) -> null);
    List<InboxEvent> batch = events(ids[1], ids[3], ids[5], ids[7], ids[8], ids[9], ids[10], ids[11], ids[12]);
    List<InboxResult> results;

    try (Connection holder = ds.getConnection(); Connection c = ds.getConnection()) {
      holder.setAutoCommit(false);
      // a new event of another transaction, not committed, among the recorded ones in key order
      inbox.process(JdbcTransaction.of(holder), "billing", event("e11x" + ids[0].substring(2), "{}"),
          (tx, event) -> null);
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        // a lock wait fails within a second instead of hanging until the holder ends
        if (dialect() == JdbcDialect.POSTGRESQL) {
          st.execute("SET LOCAL lock_timeout = '1s'");
        } else if (dialect() == JdbcDialect.MARIADB) {
          st.execute("SET SESSION innodb_lock_wait_timeout = 1");
        }
      }
      try {
        results = inbox.processBatch(JdbcTransaction.of(c), "billing", batch, eventEffect(new ArrayList<>()));
        c.commit();
      } finally {
        holder.rollback();
        if (dialect() == JdbcDialect.MARIADB) {
          try (Statement st = c.createStatement()) {
            st.execute("SET SESSION innodb_lock_wait_timeout = DEFAULT");
          }
        }
      }
    }

    assertThat(duplicateFlags(results)).containsExactly(true, true, true, true, true, true, true, true, false);
    assertThat(effectCount(ids[12])).isEqualTo(1);
  }

  // ---- lock waits ----

  /** The database's id of {@code c}'s session: what the lock views name it by. */
  long sessionId(Connection c) throws SQLException {
    String sql = dialect() == JdbcDialect.POSTGRESQL ? "SELECT pg_backend_pid()"
        : dialect() == JdbcDialect.MARIADB ? "SELECT CONNECTION_ID()" : "SELECT SESSION_ID()";
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** An inbox like {@link #inbox} (no listener) whose data source reports the session of the connection it lends. */
  Inbox inboxReporting(CompletableFuture<Long> session) {
    DataSource reporting = (DataSource) Proxy.newProxyInstance(InboxContract.class.getClassLoader(),
        new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
          try {
            Object r = method.invoke(ds, args);
            if (method.getName().equals("getConnection")) {
              session.complete(sessionId((Connection) r));
            }
            return r;
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
    return Inbox.builder(JdbcInboxStore.builder(reporting).dialect(dialect()).table(store.table()).build())
        .clock(clock).build();
  }

  /**
   * Waits, by polling the database (no sleeps, bounded by a deadline), until session {@code waiter} is blocked on
   * {@code heldKey}, an event id that session {@code holder} inserted and has not committed; fails if {@code waiting},
   * the waiter's work, ends first.
   */
  void awaitBlockedOn(long holder, long waiter, String heldKey, Future<?> waiting) throws SQLException {
    try (Connection c = ds.getConnection()) {
      Eventually.await("session " + waiter + " waits for event " + heldKey + " of session " + holder,
          Duration.ofSeconds(30), () -> {
            if (waiting.isDone()) {
              throw new AssertionError("session " + waiter + " finished without waiting for session " + holder);
            }
            try {
              return blockedOn(c, holder, waiter, heldKey);
            } catch (SQLException e) {
              throw new IllegalStateException(e);
            }
          }, blocked -> blocked);
    }
  }

  /**
   * Whether session {@code waiter} is blocked on {@code heldKey} of session {@code holder}.
   *
   * <ul>
   *   <li>PostgreSQL: {@code pg_blocking_pids(waiter)} lists the holder.</li>
   *   <li>MariaDB: the waiter's transaction is in {@code LOCK WAIT} in the live {@code SHOW ENGINE INNODB STATUS}
   *       (as in {@link MariaDbInboxReturningTest}: {@code information_schema.INNODB_TRX} and {@code INNODB_LOCK_WAITS}
   *       come from a cache that polling keeps stale). It does not name the holder; nothing else holds the test's
   *       keys.</li>
   *   <li>H2 2.x: a unique key held by an uncommitted insert is no lock with a queue ({@code BLOCKER_ID} stays null):
   *       the insert fails with {@code CONCURRENT_UPDATE_1} and H2 retries it until the holder ends or the lock timeout
   *       passes. So: the waiter is executing the inbox's insert of {@code heldKey} ({@code EXECUTING_STATEMENT} lists
   *       the parameters), which cannot end while the holder holds it; or {@code BLOCKER_ID} is the holder.</li>
   * </ul>
   */
  boolean blockedOn(Connection c, long holder, long waiter, String heldKey) throws SQLException {
    switch (dialect()) {
      case POSTGRESQL:
        try (PreparedStatement ps = c.prepareStatement("SELECT CAST(? AS INTEGER) = ANY(pg_blocking_pids(?))")) {
          ps.setLong(1, holder);
          ps.setInt(2, Math.toIntExact(waiter));
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
          }
        }
      case MARIADB:
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW ENGINE INNODB STATUS")) {
          rs.next();
          for (String transaction : rs.getString("Status").split("---TRANSACTION ")) {
            if (transaction.contains("\nLOCK WAIT ") && transaction.contains("MariaDB thread id " + waiter + ",")) {
              return true;
            }
          }
          return false;
        }
      default:
        try (PreparedStatement ps = c.prepareStatement(
            "SELECT BLOCKER_ID, EXECUTING_STATEMENT FROM INFORMATION_SCHEMA.SESSIONS WHERE SESSION_ID = ?")) {
          ps.setLong(1, waiter);
          try (ResultSet rs = ps.executeQuery()) {
            if (!rs.next()) {
              return false;
            }
            long blocker = rs.getLong(1);
            boolean blocked = !rs.wasNull() && blocker == holder;
            String executing = rs.getString(2);
            return blocked || executing != null && executing.startsWith("INSERT INTO " + store.table() + " ")
                && executing.contains("2: '" + heldKey + "'");
          }
        }
    }
  }

  // ---- first deliveries: the handler first, the records with the commit (PostgreSQL) ----

  /** Whether {@code eventId}'s record is there, read on the handler's connection, in its transaction. */
  boolean recordedInTransaction(Connection c, String eventId) throws SQLException {
    return TestPostgres.inboxRecorded(c, store.table(), "billing", eventId);
  }

  List<InboxResult> firstDelivery(List<InboxEvent> events, InboxHandler handler) {
    return inbox.processBatchAndCommit("billing", events, handler, true);
  }

  @Test
  void aFirstDeliveryRunsTheHandlerBeforeTheRecordsOnPostgresAndARedeliveryIsSkipped() throws Exception {
    boolean recordsLast = dialect() == JdbcDialect.POSTGRESQL;
    assertThat(store.recordsLast()).isEqualTo(recordsLast);
    String[] ids = ids(4);
    List<String> ran = new ArrayList<>();
    List<Boolean> recordedBeforeHandler = new ArrayList<>();
    InboxHandler handler = (tx, event) -> {
      ran.add(event.eventId());
      recordedBeforeHandler.add(recordedInTransaction(connection(tx), event.eventId()));
      return apply(connection(tx), event.eventId());
    };

    List<InboxResult> results = firstDelivery(events(ids[0], ids[1], ids[0], ids[2], ids[3]), handler);

    assertThat(duplicateFlags(results)).containsExactly(false, false, true, false, false);
    assertThat(resultTexts(results)).containsExactly("applied " + ids[0], "applied " + ids[1], "applied " + ids[0],
        "applied " + ids[2], "applied " + ids[3]);
    assertThat(results).extracting(InboxResult::firstReceivedAt).containsOnly(clock.instant());
    assertThat(ran).containsExactly(ids);
    assertThat(recordedBeforeHandler).as("records first unless the store records last").containsOnly(!recordsLast);
    assertThat(processed).hasValue(4);
    assertThat(duplicates).hasValue(1);
    assertThat(inboxCount("processed_at IS NULL")).isZero();

    clock.advance(Duration.ofMinutes(1));
    List<InboxResult> again = firstDelivery(events(ids), handler);

    assertThat(again).isEqualTo(List.of(results.get(0), results.get(1), results.get(3), results.get(4)).stream()
        .map(r -> new InboxResult(true, r.result(), r.firstReceivedAt())).collect(Collectors.toList()));
    assertThat(ran).as("on PostgreSQL the handler ran again, and its writes rolled back")
        .hasSize(recordsLast ? 8 : 4);
    for (String id : ids) {
      assertThat(effectCount(id)).as("effect of %s", id).isEqualTo(1);
    }
    assertThat(duplicates).hasValue(5);
    assertThat(processed).as("the rolled-back run is not reported").hasValue(4);
  }

  @Test
  void aFirstDeliveryHoldingAProducersDuplicateWhoseHandlerFailsOnItSkipsTheDuplicate() throws Exception {
    String[] ids = ids(3);
    processCommitted("billing", ids[1], "{\"id\":\"" + ids[1] + "\"}");
    doneBefore(ids[1]);
    long marked = onceCount();
    InboxHandler handler = (tx, event) -> {
      apply(connection(tx), event.eventId());
      try (PreparedStatement ps = connection(tx).prepareStatement("INSERT INTO " + once + " (event_id) VALUES (?)")) {
        ps.setString(1, event.eventId()); // a business key: fails for the event done before
        ps.executeUpdate();
      }
      return "done " + event.eventId();
    };

    List<InboxResult> results = firstDelivery(events(ids), handler);

    assertThat(duplicateFlags(results)).containsExactly(false, true, false);
    assertThat(resultTexts(results)).containsExactly("done " + ids[0], "applied " + ids[1], "done " + ids[2]);
    for (String id : ids) {
      assertThat(effectCount(id)).as("effect of %s", id).isEqualTo(1);
    }
    assertThat(onceCount()).isEqualTo(marked + 2);
  }

  @Test
  void aFirstDeliveryWithAnIdRecordedUnderAnotherPayloadIsRefusedAndRecordsNothing() throws Exception {
    String[] ids = ids(3);
    processCommitted("billing", ids[2], "{\"amount\":1}");
    List<String> ran = new ArrayList<>();

    assertThatThrownBy(() -> firstDelivery(events(ids), eventEffect(ran)))
        .isInstanceOf(InboxPayloadMismatchException.class)
        .satisfies(e -> assertThat(((InboxPayloadMismatchException) e).eventId()).isEqualTo(ids[2]));

    assertThat(ran).as("on PostgreSQL the first-delivery try ran the handler, rolled back; the usual order did not")
        .containsExactly(dialect() == JdbcDialect.POSTGRESQL ? ids : new String[0]);
    assertThat(mismatches).hasValue(1);
    assertThat(processed).as("the event processed before only").hasValue(1);
    assertThat(inbox.contains("billing", ids[0])).isFalse();
    assertThat(inbox.contains("billing", ids[1])).isFalse();
    assertThat(effectCount(ids[0])).isZero();
    assertThat(effectCount(ids[2])).isEqualTo(1);
  }

  @Test
  void aFirstDeliveryWhoseHandlerCaughtAnSqlErrorStoresNothingOnPostgres() throws Exception {
    String[] ids = ids(3);
    doneBefore(ids[2]); // the handler's last statement fails, and it catches that
    AtomicInteger calls = new AtomicInteger();
    InboxHandler catching = catchingHandler(null);
    assertCaughtErrorOutcome(List.of(ids), () -> firstDelivery(events(ids), (tx, event) -> {
      calls.incrementAndGet();
      return catching.handle(tx, event);
    }));
    // on PostgreSQL the first-delivery order's insert found the aborted transaction and rolled back; the usual order
    // ran the handler again, which failed the same way
    assertThat(calls).hasValue(dialect() == JdbcDialect.POSTGRESQL ? 6 : 3);
  }

  @Test
  void aProducersCopyWhoseHandlerCatchesAnSqlErrorOnItIsADuplicateInTheFirstDeliveryOrder() throws Exception {
    String[] ids = ids(3);
    List<InboxResult> first = firstDelivery(events(ids), catchingHandler("r "));
    long marked = onceCount();

    // the copies: on PostgreSQL the handler runs, inserts its mark again and catches the violation, which aborts the
    // transaction; the records' insert fails, and the usual order finds the three recorded
    List<InboxResult> copies = firstDelivery(events(ids), catchingHandler("r "));

    assertThat(duplicateFlags(first)).containsOnly(false).hasSize(3);
    assertThat(duplicateFlags(copies)).containsOnly(true).hasSize(3);
    assertThat(resultTexts(copies)).containsExactly("r " + ids[0], "r " + ids[1], "r " + ids[2]);
    for (String id : ids) {
      assertThat(effectCount(id)).as("effect of %s", id).isEqualTo(1);
    }
    assertThat(onceCount()).isEqualTo(marked);
  }

  @Test
  void aHandlerThatMarksTheTransactionRollbackOnlyFailsTheCallInEitherOrder() throws Exception {
    String[] ids = ids(2);
    InboxHandler marking = (tx, event) -> {
      String result = apply(connection(tx), event.eventId());
      tx.setRollbackOnly();
      return result;
    };

    for (boolean firstDelivery : new boolean[] {true, false}) {
      assertThatThrownBy(() -> inbox.processBatchAndCommit("billing", events(ids), marking, firstDelivery))
          .isInstanceOf(InboxHandlerException.class).hasMessageContaining("rollback-only");
    }

    for (String id : ids) {
      assertThat(inbox.contains("billing", id)).isFalse();
      assertThat(effectCount(id)).isZero();
    }
    // the usual order tells the listener before the commit fails the call; the first-delivery order does not
    assertThat(processed).hasValue(dialect() == JdbcDialect.POSTGRESQL ? 2 : 4);
  }

  @Test
  void aFirstDeliveryThatCannotGetAConnectionFailsWithoutTryingTheUsualOrder() throws Exception {
    AtomicInteger asked = new AtomicInteger();
    DataSource refusing = (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(),
        new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
          if (method.getName().equals("getConnection")) {
            asked.incrementAndGet();
            throw new SQLException("connection refused", "08001");
          }
          return invoke(ds, method, args);
        });
    Inbox on = Inbox.builder(JdbcInboxStore.builder(refusing).dialect(dialect()).table(store.table()).build())
        .clock(clock).build();
    List<String> ran = new ArrayList<>();

    assertThatThrownBy(() -> on.processBatchAndCommit("billing", events(ids(2)), eventEffect(ran), true))
        .isInstanceOf(StoreException.class);

    assertThat(asked).as("one transaction tried: the usual order would fail alike").hasValue(1);
    assertThat(ran).isEmpty();
  }

  @Test
  void aFirstDeliveryWhoseHandlerFailsFailsAsInTheUsualOrderAndRecordsNothing() throws Exception {
    String[] ids = ids(2);
    List<String> ran = new ArrayList<>();
    assertThatThrownBy(() -> firstDelivery(events(ids), (tx, event) -> {
      ran.add(event.eventId());
      apply(connection(tx), event.eventId());
      throw new IllegalStateException("downstream refused " + event.eventId());
    })).isInstanceOf(InboxHandlerException.class).hasRootCauseMessage("downstream refused " + ids[0])
        .satisfies(e -> assertThat(((InboxHandlerException) e).eventId()).isEqualTo(ids[0]));
    assertThat(ran).as("on PostgreSQL the first-delivery try, then the usual order's")
        .hasSize(dialect() == JdbcDialect.POSTGRESQL ? 2 : 1).containsOnly(ids[0]);
    for (String id : ids) {
      assertThat(inbox.contains("billing", id)).isFalse();
      assertThat(effectCount(id)).isZero();
    }
  }

  @Test
  void concurrentFirstDeliveriesOfOverlappingBatchesGiveEachEventOneEffect() throws Exception {
    raceOverlappingBatches(effect(), thread -> true);
  }

  /**
   * 25 rounds of 8 threads, each processing three of four events in one transaction of the inbox, in the
   * first-delivery order when {@code firstDelivery} says so for the thread's number, each call retried on a passing
   * conflict: one handler run and one effect per event and round.
   */
  void raceOverlappingBatches(InboxHandler handler, IntPredicate firstDelivery) throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 25; round++) {
        String[] ids = ids(4);
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<Future<List<InboxResult>>> calls = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          // every thread a batch of three of the four events, starting at another one
          List<InboxEvent> batch = events(ids[t % 4], ids[(t + 1) % 4], ids[(t + 2) % 4]);
          boolean first = firstDelivery.test(t);
          calls.add(pool.submit(() -> {
            barrier.await(10, TimeUnit.SECONDS);
            return retryingConflicts(() -> inbox.processBatchAndCommit("billing", batch, handler, first));
          }));
        }
        Map<String, Integer> ran = new HashMap<>();
        for (int t = 0; t < threads; t++) {
          List<InboxResult> results = calls.get(t).get(60, TimeUnit.SECONDS);
          for (int k = 0; k < 3; k++) {
            String id = ids[(t + k) % 4];
            assertThat(results.get(k).result()).isEqualTo("applied " + id);
            ran.merge(id, results.get(k).duplicate() ? 0 : 1, Integer::sum);
          }
        }
        for (String id : ids) {
          assertThat(ran.get(id)).as("round %d: one delivery of %s ran its handler", round, id).isEqualTo(1);
          assertThat(effectCount(id)).as("round %d: one effect of %s", round, id).isEqualTo(1);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Transactions of the caller's kind, as a framework's: a connection of the pool with auto-commit off, handed to the
   * work as {@code JdbcTransaction.of}, committed when the work returns, rolled back when it throws; {@code joins}
   * says what {@link InboxTransactions#joinsOpenTransaction} answers.
   */
  InboxTransactions callersTransactions(boolean joins) {
    return new InboxTransactions() {
      @Override
      public <R> R inTransaction(TransactionWork<R> work) throws Exception {
        try (Connection c = ds.getConnection()) {
          c.setAutoCommit(false);
          try {
            R r = work.execute(JdbcTransaction.of(c));
            c.commit();
            return r;
          } catch (Exception | Error e) {
            c.rollback();
            throw e;
          } finally {
            c.setAutoCommit(true);
          }
        }
      }

      @Override
      public boolean joinsOpenTransaction() {
        return joins;
      }
    };
  }

  @Test
  void aFirstDeliveryInTransactionsOfTheCallersKindRecordsLastUnlessTheyJoinAnOpenOne() throws Exception {
    boolean recordsLast = dialect() == JdbcDialect.POSTGRESQL;
    Inbox own = Inbox.builder(store).clock(clock).transactions(callersTransactions(false)).build();
    Inbox joining = Inbox.builder(store).clock(clock).transactions(callersTransactions(true)).build();
    String[] ids = ids(3);
    List<Boolean> recordedBeforeHandler = new ArrayList<>();
    InboxHandler handler = (tx, event) -> {
      recordedBeforeHandler.add(recordedInTransaction(connection(tx), event.eventId()));
      return apply(connection(tx), event.eventId());
    };

    List<InboxResult> first = own.processBatchAndCommit("billing", events(ids[0], ids[1]), handler, true);
    List<InboxResult> copy = own.processBatchAndCommit("billing", events(ids[1]), handler, true);
    List<InboxResult> joined = joining.processBatchAndCommit("billing", events(ids[2]), handler, true);

    assertThat(duplicateFlags(first)).containsExactly(false, false);
    assertThat(duplicateFlags(copy)).containsExactly(true);
    assertThat(copy.get(0).result()).isEqualTo("applied " + ids[1]);
    assertThat(duplicateFlags(joined)).containsExactly(false);
    // PostgreSQL: the first two without their rows yet; the copy's try, which finds the committed row and rolls back;
    // the joined one records first. Elsewhere every call records first, and the copy's handler does not run.
    assertThat(recordedBeforeHandler).containsExactly(recordsLast
        ? new Boolean[] {false, false, true, true} : new Boolean[] {true, true, true});
    for (String id : ids) {
      assertThat(effectCount(id)).as("effect of %s", id).isEqualTo(1);
    }
  }

  /**
   * {@code work}, tried again (up to 10 times) when it fails for a passing conflict between transactions, as a
   * consumer retries a deadlock without counting it.
   */
  List<InboxResult> retryingConflicts(Callable<List<InboxResult>> work) throws Exception {
    for (int attempt = 1; ; attempt++) {
      try {
        return work.call();
      } catch (RuntimeException e) {
        if (attempt == 10 || store.fault(e) != InboxStore.Fault.CONTENTION) {
          throw e;
        }
      }
    }
  }

  @Test
  void concurrentDeliveriesInBothOrdersWithABusinessKeyGiveEachEventOneEffect() throws Exception {
    // the handler's business key: a duplicate's first-delivery try fails on it, or waits for the transaction that
    // holds it and then fails; a transaction of the other order may deadlock with it, which one of them retries
    InboxHandler keyed = (tx, event) -> {
      try (PreparedStatement ps = connection(tx).prepareStatement("INSERT INTO " + once + " (event_id) VALUES (?)")) {
        ps.setString(1, event.eventId());
        ps.executeUpdate();
      }
      return apply(connection(tx), event.eventId());
    };

    raceOverlappingBatches(keyed, thread -> thread % 2 == 0);

    assertThat(onceCount()).isEqualTo(100);
  }

  /**
   * Connections whose next statement that ends with a {@code COMMIT} runs, and then reports a lost connection
   * (SQLState 08006), as when the server committed and its answer never came back.
   */
  static DataSource losingTheAnswerToTheNextCommit(DataSource real, AtomicBoolean lose) {
    return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
        (proxy, method, args) -> {
          Object result = invoke(real, method, args);
          if (!method.getName().equals("getConnection")) {
            return result;
          }
          Connection c = (Connection) result;
          return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
              (cp, cm, cargs) -> {
                Object made = invoke(c, cm, cargs);
                if (!cm.getName().equals("prepareStatement") || !String.valueOf(cargs[0]).endsWith("; COMMIT")) {
                  return made;
                }
                PreparedStatement ps = (PreparedStatement) made;
                return Proxy.newProxyInstance(PreparedStatement.class.getClassLoader(),
                    new Class<?>[] {PreparedStatement.class}, (sp, sm, sargs) -> {
                      Object done = invoke(ps, sm, sargs);
                      if (sm.getName().startsWith("execute") && lose.getAndSet(false)) {
                        throw new SQLException("connection lost after COMMIT was sent", "08006");
                      }
                      return done;
                    });
              });
        });
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Test
  void aFirstDeliveryWhoseCommitsAnswerIsLostIsFoundCommittedAndNotRunAgain() throws Exception {
    AtomicBoolean lose = new AtomicBoolean(true);
    JdbcInboxStore losing = JdbcInboxStore.builder(losingTheAnswerToTheNextCommit(ds, lose)).dialect(dialect())
        .table(store.table()).build();
    Inbox on = Inbox.builder(losing).clock(clock).build();
    String[] ids = ids(3);
    List<String> ran = new ArrayList<>();

    List<InboxResult> results = on.processBatchAndCommit("billing", events(ids), eventEffect(ran), true);

    assertThat(lose.get()).as("a COMMIT was sent with the records (PostgreSQL only)")
        .isEqualTo(dialect() != JdbcDialect.POSTGRESQL);
    assertThat(ran).as("the handler ran once: the usual order found the committed records").containsExactly(ids);
    assertThat(duplicateFlags(results)).containsOnly(dialect() == JdbcDialect.POSTGRESQL).hasSize(3);
    assertThat(resultTexts(results)).containsExactly(Arrays.stream(ids).map(id -> "applied " + id)
        .toArray(String[]::new));
    for (String id : ids) {
      assertThat(effectCount(id)).as("effect of %s", id).isEqualTo(1);
    }
  }

  // ---- a handler that catches an SQL error ----

  /** Commits {@code eventId} into {@link #once}, as a handler run before would have. */
  void doneBefore(String eventId) throws SQLException {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("INSERT INTO " + once + " (event_id) VALUES (?)")) {
      ps.setString(1, eventId);
      ps.executeUpdate();
    }
  }

  long onceCount() throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + once)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * The classic "insert, and ignore a unique violation" of a handler: inserts {@code eventId} into {@link #once} and
   * catches the violation of one {@link #doneBefore}. On PostgreSQL the failed insert has aborted the transaction.
   */
  void insertIgnoringDuplicate(Connection c, String eventId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + once + " (event_id) VALUES (?)")) {
      ps.setString(1, eventId);
      ps.executeUpdate();
    } catch (SQLException e) {
      boolean unique = dialect() == JdbcDialect.MARIADB ? e.getErrorCode() == 1062 : "23505".equals(e.getSQLState());
      if (!unique) {
        throw e;
      }
    }
  }

  /** Applies the effect of each event, then marks it done ignoring a duplicate; returns {@code result} + the id. */
  InboxHandler catchingHandler(String result) {
    return (tx, event) -> {
      apply(connection(tx), event.eventId());
      insertIgnoringDuplicate(connection(tx), event.eventId());
      return result == null ? null : result + event.eventId();
    };
  }

  @FunctionalInterface
  interface Run {
    List<InboxResult> call() throws Exception;
  }

  /**
   * The outcome of {@code run}, a call whose handler caught a unique violation as its last statement, on {@code fresh}
   * (the events the handler ran for; the first named on failure). PostgreSQL aborted the transaction, so the commit
   * would silently roll back: an {@link InboxHandlerException} with the {@code 25P02} cause, and nothing is stored.
   * MariaDB and H2 roll back the failed statement only: the call commits, the caught error ignored.
   */
  void assertCaughtErrorOutcome(List<String> fresh, Run run) throws Exception {
    long marked = onceCount();
    if (dialect() == JdbcDialect.POSTGRESQL) {
      assertThatThrownBy(run::call)
          .isInstanceOf(InboxHandlerException.class)
          .hasMessageContaining("the transaction was aborted by an error the handler caught; roll back")
          .satisfies(e -> {
            assertThat(((InboxHandlerException) e).eventId()).isEqualTo(fresh.get(0));
            assertThat(e.getCause()).isInstanceOf(SQLException.class);
            assertThat(((SQLException) e.getCause()).getSQLState()).isEqualTo("25P02");
          });
      for (String id : fresh) {
        assertThat(inbox.contains("billing", id)).as("no inbox row for %s", id).isFalse();
        assertThat(effectCount(id)).as("no effect for %s", id).isZero();
      }
      assertThat(onceCount()).as("nothing marked").isEqualTo(marked);
    } else {
      List<InboxResult> results = run.call();
      assertThat(results).filteredOn(r -> !r.duplicate()).as("processed").hasSize(fresh.size());
      for (String id : fresh) {
        assertThat(inbox.contains("billing", id)).as("inbox row for %s", id).isTrue();
        assertThat(effectCount(id)).as("effect for %s", id).isEqualTo(1);
      }
      assertThat(onceCount()).as("all but the duplicate marked").isEqualTo(marked + fresh.size() - 1);
    }
  }

  /** {@code processBatch} in a transaction of the caller's, committed when it returns, rolled back when it throws. */
  List<InboxResult> batchInOwnTransaction(List<InboxEvent> events, InboxHandler handler) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      List<InboxResult> r;
      try {
        r = inbox.processBatch(JdbcTransaction.of(c), "billing", events, handler);
      } catch (RuntimeException e) {
        c.rollback();
        throw e;
      }
      c.commit();
      return r;
    }
  }

  @Test
  void aBatchWhoseHandlerCaughtAnSqlErrorFailsBeforeTheCallersCommitOnPostgres() throws Exception {
    String[] noResults = ids(3);
    doneBefore(noResults[2]);
    assertCaughtErrorOutcome(List.of(noResults),
        () -> batchInOwnTransaction(events(noResults), catchingHandler(null)));

    String[] withResults = ids(3);
    doneBefore(withResults[2]);
    assertCaughtErrorOutcome(List.of(withResults),
        () -> batchInOwnTransaction(events(withResults), catchingHandler("r ")));
  }

  @Test
  void aCommittedBatchWhoseHandlerCaughtAnSqlErrorStoresNothingOnPostgres() throws Exception {
    String[] ids = ids(4);
    processCommitted("billing", ids[0], "{\"id\":\"" + ids[0] + "\"}");
    doneBefore(ids[3]);
    // a recorded event first: the failure names the first new one
    assertCaughtErrorOutcome(List.of(ids[1], ids[2], ids[3]),
        () -> batchInInboxTransaction(events(ids), catchingHandler(null)));

    String[] bulk = ids(3);
    doneBefore(bulk[2]);
    Bulk catchingBulk = (c, fresh) -> {
      for (InboxEvent e : fresh) {
        apply(c, e.eventId());
      }
      for (InboxEvent e : fresh) {
        insertIgnoringDuplicate(c, e.eventId());
      }
      return null;
    };
    assertCaughtErrorOutcome(List.of(bulk), () -> batchInInboxTransaction(events(bulk), atOnce(catchingBulk)));

    String[] withResults = ids(2);
    doneBefore(withResults[1]);
    assertCaughtErrorOutcome(List.of(withResults),
        () -> batchInInboxTransaction(events(withResults), catchingHandler("r ")));
  }

  @Test
  void anEventWhoseHandlerCaughtAnSqlErrorFailsOnPostgres() throws Exception {
    // a single event is a batch of one: the UPDATE keeping its result runs after the handler, and on PostgreSQL it
    // fails in the aborted transaction
    InboxHandler catching = catchingHandler("r ");
    String inOwn = UUID.randomUUID().toString();
    doneBefore(inOwn);
    assertCaughtErrorOutcome(List.of(inOwn), () -> processInOwnTransaction(event(inOwn, "{}"), catching));

    String committed = UUID.randomUUID().toString();
    doneBefore(committed);
    assertCaughtErrorOutcome(List.of(committed),
        () -> List.of(inInboxTransaction(inbox, "billing", event(committed, "{}"), catching)));

    // without a result to keep, the probe reading the record back fails there instead
    String noResult = UUID.randomUUID().toString();
    doneBefore(noResult);
    assertCaughtErrorOutcome(List.of(noResult),
        () -> processInOwnTransaction(event(noResult, "{}"), catchingHandler(null)));
  }

  /** {@code process} in a transaction of the caller's, committed when it returns, rolled back when it throws. */
  List<InboxResult> processInOwnTransaction(InboxEvent event, InboxHandler handler) throws SQLException {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      InboxResult r;
      try {
        r = inbox.process(JdbcTransaction.of(c), "billing", event, handler);
      } catch (RuntimeException e) {
        c.rollback();
        throw e;
      }
      c.commit();
      return List.of(r);
    }
  }

  @Test
  void aHandlerThatRecoversFromAnSqlErrorWithASavepointCommitsEverywhere() throws Exception {
    String[] ids = ids(3);
    doneBefore(ids[1]);
    InboxHandler recovering = (tx, event) -> {
      Connection c = connection(tx);
      apply(c, event.eventId());
      Savepoint before = c.setSavepoint();
      insertIgnoringDuplicate(c, event.eventId());
      if (event.eventId().equals(ids[1])) {
        c.rollback(before); // what a handler that must go on after an SQL error does
      } else {
        c.releaseSavepoint(before);
      }
      return null;
    };

    List<InboxResult> inOwn = batchInOwnTransaction(events(ids), recovering);
    String[] more = ids(2);
    doneBefore(more[0]);
    InboxHandler alwaysRollsBack = (tx, event) -> {
      Connection c = connection(tx);
      Savepoint before = c.setSavepoint();
      insertIgnoringDuplicate(c, event.eventId());
      c.rollback(before);
      return apply(c, event.eventId());
    };
    List<InboxResult> committed = batchInInboxTransaction(events(more), alwaysRollsBack);

    assertThat(duplicateFlags(inOwn)).containsExactly(false, false, false);
    assertThat(duplicateFlags(committed)).containsExactly(false, false);
    for (String id : ids) {
      assertThat(inbox.contains("billing", id)).isTrue();
      assertThat(effectCount(id)).isEqualTo(1);
    }
    for (String id : more) {
      assertThat(inbox.contains("billing", id)).isTrue();
      assertThat(effectCount(id)).isEqualTo(1);
    }
  }

  @Test
  void aHandlerThatRollsTheTransactionBackFailsInsteadOfReportingTheEventsProcessed() throws Exception {
    InboxHandler rollingBack = (tx, event) -> {
      apply(connection(tx), event.eventId());
      driverConnection(tx).rollback(); // around the connection handed to it, which refuses
      return null;
    };
    String[] batch = ids(3);
    String[] withResults = ids(2);
    String single = UUID.randomUUID().toString();

    assertThatThrownBy(() -> batchInOwnTransaction(events(batch), rollingBack))
        .isInstanceOf(InboxHandlerException.class).hasMessageContaining("gone");
    assertThatThrownBy(() -> batchInInboxTransaction(events(withResults), (tx, event) -> {
      rollingBack.handle(tx, event);
      return "r";
    })).isInstanceOf(InboxHandlerException.class).hasMessageContaining("gone");
    assertThatThrownBy(() -> inInboxTransaction(inbox, "billing", event(single, "{}"), rollingBack))
        .isInstanceOf(InboxHandlerException.class).hasMessageContaining("gone");

    for (String id : List.of(batch[0], batch[1], batch[2], withResults[0], withResults[1], single)) {
      assertThat(inbox.contains("billing", id)).as("recorded %s", id).isFalse();
    }
  }

  /**
   * The driver's connection under the one the inbox hands its handler, which refuses to end the transaction: what a
   * handler reaches through {@code Statement.getConnection()}.
   */
  static Connection driverConnection(StoreTransaction tx) throws SQLException {
    try (Statement st = connection(tx).createStatement()) {
      return st.getConnection();
    }
  }

  /** A handler that ends the inbox's transaction itself, in one of the ways its connection refuses. */
  interface Misuse {
    void apply(Connection c) throws SQLException;
  }

  @Test
  void aHandlerCannotEndTheInboxTransactionThroughItsConnectionInEitherOrder() throws Exception {
    Map<String, Misuse> misuses = new LinkedHashMap<>();
    misuses.put("commit()", Connection::commit);
    misuses.put("rollback()", Connection::rollback);
    misuses.put("setAutoCommit(true)", c -> c.setAutoCommit(true));
    misuses.put("close()", Connection::close);
    for (Map.Entry<String, Misuse> misuse : misuses.entrySet()) {
      for (boolean firstDelivery : List.of(false, true)) {
        String[] ids = ids(2);
        InboxHandler ending = (tx, event) -> {
          String result = apply(connection(tx), event.eventId());
          misuse.getValue().apply(connection(tx));
          return result;
        };

        assertThatThrownBy(() -> inbox.processBatchAndCommit("billing", events(ids), ending, firstDelivery))
            .as("%s, first delivery %s", misuse.getKey(), firstDelivery).isInstanceOf(InboxHandlerException.class)
            .rootCause().isInstanceOf(IllegalStateException.class)
            .hasMessageContaining(misuse.getKey() + " on the connection of a transaction that");
        for (String id : ids) {
          assertThat(effectCount(id)).as("effect of %s after %s", id, misuse.getKey()).isZero();
          assertThat(inbox.contains("billing", id)).as("%s recorded after %s", id, misuse.getKey()).isFalse();
        }
        // nothing counted: a redelivery applies the effects once
        assertThat(duplicateFlags(firstDelivery(events(ids), effect()))).containsExactly(false, false);
        for (String id : ids) {
          assertThat(effectCount(id)).as("effect of %s", id).isEqualTo(1);
        }
      }
    }
  }

  @Test
  void theHandlersConnectionRefusesUseOnceTheTransactionHasEndedAndSavepointsPassThrough() throws Exception {
    String[] ids = ids(1);
    List<Connection> kept = new ArrayList<>();
    InboxHandler withSavepoint = (tx, event) -> {
      Connection c = connection(tx);
      kept.add(c);
      Savepoint before = c.setSavepoint();
      apply(c, event.eventId() + "-undone");
      c.rollback(before);
      return apply(c, event.eventId());
    };

    assertThat(duplicateFlags(batchInInboxTransaction(events(ids), withSavepoint))).containsExactly(false);

    assertThat(effectCount(ids[0])).isEqualTo(1);
    assertThat(effectCount(ids[0] + "-undone")).isZero();
    Connection leaked = kept.get(0);
    assertThat(leaked.isClosed()).isTrue();
    assertThatThrownBy(() -> leaked.prepareStatement("SELECT 1")).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("has ended");
  }

  @Test
  void aHandlerThatSwitchesAutoCommitOnThroughTheDriversConnectionFails() {
    String[] batch = ids(2);

    assertThatThrownBy(() -> batchInInboxTransaction(events(batch), (tx, event) -> {
      driverConnection(tx).setAutoCommit(true);
      return null;
    })).isInstanceOf(InboxHandlerException.class).hasMessageContaining("auto-commit");
  }

  @Test
  void aFirstDeliveryWhoseHandlerSwitchesAutoCommitOnFailsAndItsRedeliveryIsADuplicate() throws Exception {
    String[] ids = ids(2);
    InboxHandler switching = (tx, event) -> {
      String result = apply(connection(tx), event.eventId());
      driverConnection(tx).setAutoCommit(true); // commits the effect on its own
      return result;
    };

    assertThatThrownBy(() -> firstDelivery(events(ids), switching))
        .isInstanceOf(InboxHandlerException.class).hasMessageContaining("auto-commit");
    List<InboxResult> again = firstDelivery(events(ids), effect());

    // in either order the switch committed what came before it, and the records went with it or after it
    assertThat(duplicateFlags(again)).containsExactly(true, true);
    for (String id : ids) {
      assertThat(effectCount(id)).as("effect of %s", id).isEqualTo(1);
    }
  }

  /** The real connection, recording the SQL of every statement prepared on it by its first word. */
  static Connection recording(Connection real, Map<String, List<String>> prepared) {
    return (Connection) Proxy.newProxyInstance(InboxContract.class.getClassLoader(), new Class<?>[] {Connection.class},
        (proxy, method, args) -> {
          if (method.getName().equals("prepareStatement")) {
            String sql = ((String) args[0]).strip();
            String verb = sql.replaceFirst("^\\(+", "").split("\\s+", 2)[0].toUpperCase(Locale.ROOT);
            prepared.computeIfAbsent(verb, k -> new ArrayList<>()).add(sql);
          }
          try {
            return method.invoke(real, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @Test
  void aBatchIsWrittenWithOneInsertOnPostgresAndMariaDb() throws Exception {
    String[] ids = ids(10);
    processCommitted("billing", ids[7], "{\"id\":\"" + ids[7] + "\"}");
    List<InboxEvent> large = events(ids);
    large.add(large.get(3));
    List<InboxEvent> small = events(ids(3));
    Map<String, List<String>> forLarge = new HashMap<>();
    Map<String, List<String>> forSmall = new HashMap<>();
    InboxHandler resultOnly = (tx, event) -> "r " + event.eventId();

    try (Connection real = ds.getConnection()) {
      real.setAutoCommit(false);
      inbox.processBatch(JdbcTransaction.of(recording(real, forLarge)), "billing", large, resultOnly);
      inbox.processBatch(JdbcTransaction.of(recording(real, forSmall)), "billing", small, resultOnly);
      real.commit();
    }

    boolean oneStatement = dialect() != JdbcDialect.H2;
    assertThat(forLarge.get("INSERT")).as("inserts for 10 distinct ids").hasSize(oneStatement ? 1 : 10);
    assertThat(forLarge.get("SELECT")).as("one locking read for the stored one").hasSize(1);
    assertThat(forLarge.get("UPDATE")).as("one JDBC batch for the results").hasSize(1);
    assertThat(forSmall.get("SELECT")).as("no read when every event is new").isNull();
    if (dialect() == JdbcDialect.POSTGRESQL) {
      assertThat(forSmall.get("INSERT")).as("one SQL text whatever the batch size").isEqualTo(forLarge.get("INSERT"));
    }
    assertThat(inboxCount("result LIKE 'r %'")).isEqualTo(9 + 3);
  }

  @Test
  void aBatchOfTheLargestSizeIsWrittenAndReadBackAtOnce() throws Exception {
    Inbox large = Inbox.builder(store).clock(clock).maxBatchSize(10_000).build();
    String[] ids = ids(10_000);
    List<InboxEvent> batch = events(ids);
    InboxHandler everyHundredth = (tx, event) -> event.eventId().startsWith("e1") ? null : "r";

    List<InboxResult> first = large.inTransaction(tx -> large.processBatch(tx, "billing", batch, everyHundredth));
    List<InboxResult> again = large.inTransaction(tx -> large.processBatch(tx, "billing", batch, everyHundredth));

    assertThat(duplicateFlags(first)).containsOnly(false).hasSize(10_000);
    assertThat(duplicateFlags(again)).containsOnly(true).hasSize(10_000);
    assertThat(resultTexts(again)).isEqualTo(resultTexts(first));
    assertThat(inboxCount("consumer = 'billing'")).isEqualTo(10_000);
  }

  @Test
  void badBatchInputIsRefusedBeforeAnyWrite() throws Exception {
    InboxHandler none = (tx, event) -> null;
    List<InboxEvent> oversized = events(ids(1001));

    try (Connection c = ds.getConnection()) {
      StoreTransaction tx = JdbcTransaction.of(c);
      assertThatThrownBy(() -> inbox.processBatch(tx, "billing", events("x"), none))
          .as("auto-commit on").isInstanceOf(IllegalStateException.class).hasMessageContaining("auto-commit");
      c.setAutoCommit(false);
      assertThatThrownBy(() -> inbox.processBatch(tx, "billing", List.of(), none))
          .isInstanceOf(IllegalArgumentException.class).hasMessage("events must not be empty");
      assertThatThrownBy(() -> inbox.processBatch(tx, "billing", oversized, none))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("a batch of 1001 events is larger than maxBatchSize 1000: split it, or raise maxBatchSize"
              + " (at most 10000)");
      assertThatThrownBy(() -> inbox.processBatch(tx, "billing", Arrays.asList(event("x", "{}"), null), none))
          .isInstanceOf(NullPointerException.class).hasMessage("events[1]");
      assertThatThrownBy(() -> inbox.processBatch(tx, "", events("x"), none))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("consumer");
      assertThatThrownBy(() -> inbox.processBatch(tx, "billing", events("big"), (t, event) -> "r".repeat(5000)))
          .isInstanceOf(InboxHandlerException.class).hasMessageContaining("big").hasMessageContaining("at most 4000");
      c.rollback();
    }
    assertThatThrownBy(() -> InboxEvent.of("x".repeat(256), new byte[0]))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("eventId must be 1 to 255 characters, got 256");
    assertThatThrownBy(() -> new InboxEvent("x", "", new byte[0]))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("source");
    assertThatThrownBy(() -> InboxEvent.of("x", null)).isInstanceOf(NullPointerException.class).hasMessage("payload");
    assertThatThrownBy(() -> Inbox.builder(store).maxBatchSize(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("maxBatchSize must be 1 to 10000, got 0");
    assertThatThrownBy(() -> Inbox.builder(store).maxBatchSize(10_001))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("maxBatchSize must be 1 to 10000, got 10001");

    assertThat(inbox.contains("billing", "x")).isFalse();
    assertThat(inbox.contains("billing", "big")).isFalse();
  }
}
