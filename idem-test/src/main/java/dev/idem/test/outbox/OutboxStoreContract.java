package dev.idem.test.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.StoreException;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.outbox.DeliveryResult;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxAttempt;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxPage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxRelay;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import dev.idem.outbox.OutboxSummary;
import dev.idem.outbox.OutboxSummaryPage;
import dev.idem.outbox.OutboxTransport;
import dev.idem.outbox.spi.ClaimedEvent;
import dev.idem.outbox.spi.FailedDelivery;
import dev.idem.outbox.spi.OutboxAdmin;
import dev.idem.outbox.spi.OutboxStore;
import dev.idem.outbox.spi.PendingEvent;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link OutboxStore} must pass, through the SPI (and, for two relays, through {@link Outbox} and
 * {@link OutboxRelay}). Extend it and implement {@link #createStore()}: each test gets a store of its own with no
 * events, since claims, listings, statistics and purges see every event of a store. The tests pass the time to the
 * store ({@code now}), in whole milliseconds; nothing sleeps.
 */
public abstract class OutboxStoreContract {
  /** How long the tests' claims hold their events. */
  protected static final Duration LEASE = Duration.ofSeconds(30);
  /** How long a test waits for other threads at most; a bound, never what is tested. */
  protected static final Duration WAIT = Duration.ofSeconds(60);

  protected OutboxStore store;
  /** The test's start time, in whole milliseconds. */
  protected Instant now;

  /** A store with no events, for one test. Called before each test. */
  protected abstract OutboxStore createStore() throws Exception;

  /** Releases what {@link #createStore()} made (tables, pools). */
  protected void closeStore(OutboxStore store) throws Exception {}

  /** How many failed attempts the store keeps per event ({@code historyLimit} of Idem's stores, 20 by default). */
  protected int historyLimit() {
    return 20;
  }

  @BeforeEach
  void setUpOutboxStore() throws Exception {
    store = createStore();
    now = Instant.ofEpochMilli(System.currentTimeMillis());
  }

  @AfterEach
  void tearDownOutboxStore() throws Exception {
    closeStore(store);
  }

  // ------------------------------------------------------------------------------------------------------ helpers

  protected OutboxAdmin admin() {
    return store.admin();
  }

  /** An event of type {@code kit.event} for a fresh aggregate. */
  protected static OutboxEvent event(String destination) {
    return event("kit.event", "a-" + UUID.randomUUID(), destination);
  }

  protected static OutboxEvent event(String type, String aggregateId, String destination) {
    return OutboxEvent.builder(type).aggregate("account", aggregateId).payload("{\"n\":1}")
        .destination(destination).build();
  }

  protected static PendingEvent unordered(OutboxEvent event) {
    return new PendingEvent(event, false);
  }

  protected static PendingEvent ordered(OutboxEvent event) {
    return new PendingEvent(event, true);
  }

  /** Enqueues the events in one committed transaction, written at {@code at}. */
  protected void enqueue(Instant at, PendingEvent... events) throws Exception {
    store.inTransaction(tx -> {
      store.enqueue(tx, List.of(events), at);
      return null;
    });
  }

  /** Enqueues unordered events written at {@link #now}. */
  protected void enqueue(OutboxEvent... events) throws Exception {
    List<PendingEvent> pending = new ArrayList<>();
    for (OutboxEvent e : events) {
      pending.add(unordered(e));
    }
    enqueue(now, pending.toArray(PendingEvent[]::new));
  }

  /** Claims for every destination at {@code at}, leased for {@link #LEASE}. */
  protected List<ClaimedEvent> claim(String token, Instant at, int limit) {
    return store.claim(token, List.of(), at, at.plus(LEASE), limit);
  }

  protected static ClaimedEvent single(List<ClaimedEvent> claimed) {
    assertThat(claimed).hasSize(1);
    return claimed.get(0);
  }

  protected static List<UUID> ids(List<ClaimedEvent> claimed) {
    List<UUID> ids = new ArrayList<>();
    for (ClaimedEvent c : claimed) {
      ids.add(c.message().id());
    }
    return ids;
  }

  protected static List<UUID> entryIds(List<OutboxEntry> entries) {
    List<UUID> ids = new ArrayList<>();
    for (OutboxEntry e : entries) {
      ids.add(e.id());
    }
    return ids;
  }

  protected OutboxEntry entry(UUID id) {
    return admin().find(id).orElseThrow(() -> new AssertionError("event " + id + " is not in the store"));
  }

  protected static FailedDelivery retry(ClaimedEvent c, String error, Integer code, Instant next) {
    return new FailedDelivery(c, DeliveryResult.retry(error, code), false, next);
  }

  protected static FailedDelivery dead(ClaimedEvent c, String error, Instant at) {
    return new FailedDelivery(c, DeliveryResult.permanent(error, null), true, at);
  }

  protected int delivered(String token, Instant at, ClaimedEvent... events) {
    return store.finish(token, List.of(events), List.of(), false, at);
  }

  protected int failed(String token, Instant at, FailedDelivery... failures) {
    return store.finish(token, List.of(), List.of(failures), false, at);
  }

  // ------------------------------------------------------------------------------------------------------ enqueue

  @Test
  void enqueuedEventsAppearOnlyWhenTheirTransactionCommits() throws Exception {
    OutboxEvent e = event("sink:a");

    List<Object> seenInside = store.inTransaction(tx -> {
      store.enqueue(tx, List.of(unordered(e)), now);
      return List.of(claim("kit-inside", now, 10), admin().find(e.id()),
          admin().stats(Set.of(OutboxStatus.PENDING), now).count(OutboxStatus.PENDING));
    });

    assertThat(seenInside).as("claim, find and stats from other transactions before the commit")
        .containsExactly(List.of(), Optional.empty(), 0L);
    assertThat(ids(claim("kit-after", now, 10))).containsExactly(e.id());
  }

  @Test
  void aRolledBackEnqueueLeavesNothingAndItsIdStaysFree() throws Exception {
    OutboxEvent marked = event("sink:a");
    OutboxEvent thrownOut = event("sink:a");
    Exception boom = new Exception("boom");

    store.inTransaction(tx -> {
      store.enqueue(tx, List.of(unordered(marked)), now);
      tx.setRollbackOnly();
      return null;
    });
    Throwable thrown = catchThrowable(() -> store.inTransaction(tx -> {
      store.enqueue(tx, List.of(unordered(thrownOut)), now);
      throw boom;
    }));

    assertThat(thrown).isSameAs(boom);
    assertThat(admin().find(marked.id())).isEmpty();
    assertThat(admin().find(thrownOut.id())).isEmpty();
    assertThat(claim("kit-1", now, 10)).isEmpty();
    enqueue(marked, thrownOut);
    assertThat(ids(claim("kit-2", now, 10))).containsExactly(marked.id(), thrownOut.id());
  }

  @Test
  void anEventIdWrittenBeforeIsRefused() throws Exception {
    OutboxEvent first = event("sink:a");
    enqueue(first);
    OutboxEvent sameId = OutboxEvent.builder("kit.other").id(first.id()).aggregate("account", "other")
        .payload("{\"n\":2}").destination("sink:b").build();
    OutboxEvent fresh = event("sink:a");
    OutboxEvent twin = OutboxEvent.builder("kit.event").id(fresh.id()).aggregate("account", "twin")
        .payload("{\"n\":3}").destination("sink:a").build();

    Throwable again = catchThrowable(() -> enqueue(event("sink:a"), sameId));
    Throwable twiceInOneBatch = catchThrowable(() -> enqueue(fresh, twin));

    assertThat(again).isInstanceOf(StoreException.class);
    assertThat(twiceInOneBatch).isInstanceOf(StoreException.class);
    OutboxPage all = admin().list(OutboxQuery.all());
    assertThat(entryIds(all.entries())).as("the refused batches wrote nothing").containsExactly(first.id());
    assertThat(all.entries().get(0).payload()).isEqualTo("{\"n\":1}");
  }

  @Test
  void emptyBatchesChangeNothing() throws Exception {
    store.inTransaction(tx -> {
      store.enqueue(tx, List.of(), now);
      return null;
    });
    enqueue(event("sink:a"));
    ClaimedEvent c = single(claim("kit-1", now, 10));

    int finished = store.finish("kit-1", List.of(), List.of(), false, now);
    int released = store.release("kit-1", List.of(), now);

    assertThat(finished).isZero();
    assertThat(released).isZero();
    assertThat(admin().list(OutboxQuery.all()).entries()).hasSize(1);
    assertThat(entry(c.message().id()).leaseOwner()).isEqualTo("kit-1");
  }

  @Test
  void aTransactionOfAnotherKindOrOneThatEndedIsRefused() throws Exception {
    OutboxEvent e = event("sink:a");
    StoreTransaction ended = store.inTransaction(tx -> tx);

    assertThatThrownBy(() -> store.enqueue(new ForeignTransaction(), List.of(unordered(e)), now))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.enqueue(ended, List.of(unordered(e)), now))
        .isInstanceOf(IllegalStateException.class);
    assertThat(admin().find(e.id())).isEmpty();
  }

  // ------------------------------------------------------------------------------------------------------- claims

  @Test
  void aClaimedEventCarriesEverythingThatWasEnqueued() throws Exception {
    OutboxEvent e = OutboxEvent.builder("kit.created").aggregate("order", "o-1")
        .payload("{\"note\":\"h\u00e9llo \u2603 \ud83d\ude00\"}").header("x-tenant", "alice")
        .header("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        .header("x-odd", " a: b,\t\"c\" \\ ").header("x-empty", "").destination("sink:orders/eu").build();
    enqueue(now, ordered(e));
    Instant at = now.plusSeconds(1);

    ClaimedEvent c = single(store.claim("kit-1", List.of(), at, at.plus(LEASE), 10));

    assertThat(c.attempts()).isZero();
    assertThat(c.attemptBase()).isZero();
    OutboxMessage m = c.message();
    assertThat(m.id()).isEqualTo(e.id());
    assertThat(m.type()).isEqualTo("kit.created");
    assertThat(m.aggregateType()).isEqualTo("order");
    assertThat(m.aggregateId()).isEqualTo("o-1");
    assertThat(m.payload()).isEqualTo(e.payload());
    assertThat(m.headers()).containsExactly(Map.entry("x-tenant", "alice"), Map.entry("traceparent",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"), Map.entry("x-odd", " a: b,\t\"c\" \\ "),
        Map.entry("x-empty", ""));
    assertThat(m.destination()).isEqualTo("sink:orders/eu");
    assertThat(m.attempt()).isEqualTo(1);
    assertThat(m.createdAt()).isEqualTo(now);
    OutboxEntry entry = entry(e.id());
    assertThat(entry.seq()).isEqualTo(c.seq());
    assertThat(entry.type()).isEqualTo("kit.created");
    assertThat(entry.ordered()).isTrue();
    assertThat(entry.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(entry.attempts()).isZero();
    assertThat(entry.leaseOwner()).isEqualTo("kit-1");
    assertThat(entry.leaseUntil()).isEqualTo(at.plus(LEASE));
    assertThat(entry.availableAt()).as("a leased event is next due when its lease ends").isEqualTo(at.plus(LEASE));
    assertThat(entry.createdAt()).isEqualTo(now);
    assertThat(entry.finishedAt()).isNull();
    assertThat(entry.lastError()).isNull();
    assertThat(entry.history()).isEmpty();
    assertThat(entry.headers()).isEqualTo(m.headers());
    assertThat(entry.payload()).isEqualTo(e.payload());
  }

  @Test
  void aScheduledEventIsDueAtItsTimeAndAnEarlierTimeMeansAtTheWrite() throws Exception {
    OutboxEvent later = OutboxEvent.builder("kit.event").aggregate("account", "a").payload("{}")
        .destination("sink").availableAt(now.plusSeconds(20)).build();
    OutboxEvent past = OutboxEvent.builder("kit.event").aggregate("account", "b").payload("{}")
        .destination("sink").availableAt(now.minusSeconds(60)).build();
    enqueue(later, past);

    List<ClaimedEvent> atTheWrite = claim("kit-1", now, 10);
    List<ClaimedEvent> justBefore = claim("kit-2", now.plusSeconds(20).minusMillis(1), 10);
    List<ClaimedEvent> onTime = claim("kit-3", now.plusSeconds(20), 10);

    assertThat(ids(atTheWrite)).containsExactly(past.id());
    assertThat(justBefore).isEmpty();
    assertThat(ids(onTime)).containsExactly(later.id());
  }

  @Test
  void aClaimTakesTheOldestDueEventsFirstUpToTheLimitAndReturnsThemBySeq() throws Exception {
    OutboxEvent a = event("sink");
    OutboxEvent b = event("sink");
    OutboxEvent c = event("sink");
    OutboxEvent notYet = OutboxEvent.builder("kit.event").aggregate("account", "d").payload("{}")
        .destination("sink").availableAt(now.plusSeconds(20)).build();
    enqueue(now.minusSeconds(5), unordered(a));
    enqueue(now.minusSeconds(10), unordered(b)); // a later seq, but due earlier
    enqueue(now.minusSeconds(5), unordered(c), unordered(notYet));

    List<ClaimedEvent> firstTwo = claim("kit-1", now, 2);
    List<ClaimedEvent> rest = claim("kit-2", now, 10);
    List<ClaimedEvent> scheduled = claim("kit-3", now.plusSeconds(20), 10);

    assertThat(ids(firstTwo)).as("b (due first) and a (due with c, lower seq), by seq").containsExactly(a.id(), b.id());
    assertThat(firstTwo.get(0).seq()).isLessThan(firstTwo.get(1).seq());
    assertThat(ids(rest)).containsExactly(c.id());
    assertThat(ids(scheduled)).containsExactly(notYet.id());
  }

  @Test
  void routesMatchADestinationOrItsRoutePartAndAnEmptyListMatchesEvery() throws Exception {
    OutboxEvent bare = event("pay");
    OutboxEvent detailed = event("pay:eu/1");
    OutboxEvent longer = event("payments:eu");
    OutboxEvent longerBare = event("payments");
    OutboxEvent shorter = event("pa:x");
    OutboxEvent other = event("mail:x");
    OutboxEvent upper = event("PAY:x");
    enqueue(bare, detailed, longer, longerBare, shorter, other, upper);

    List<ClaimedEvent> pay = store.claim("kit-1", List.of("pay"), now, now.plus(LEASE), 10);
    List<ClaimedEvent> mailAndPa = store.claim("kit-2", List.of("mail", "pa"), now, now.plus(LEASE), 10);
    List<ClaimedEvent> every = store.claim("kit-3", List.of(), now, now.plus(LEASE), 10);

    assertThat(ids(pay)).containsExactly(bare.id(), detailed.id());
    assertThat(ids(mailAndPa)).containsExactly(shorter.id(), other.id());
    assertThat(ids(every)).containsExactly(longer.id(), longerBare.id(), upper.id());
  }

  @Test
  void underscoreAndPercentInARouteAreNotWildcards() throws Exception {
    OutboxEvent pay = event("pay:x");
    OutboxEvent payBare = event("pay");
    OutboxEvent underscore = event("p_y:x");
    OutboxEvent percentDetail = event("pay:100%");
    enqueue(pay, payBare, underscore, percentDetail);

    List<ClaimedEvent> pY = store.claim("kit-1", List.of("p_y"), now, now.plus(LEASE), 10);
    List<ClaimedEvent> percent = store.claim("kit-2", List.of("pa%", "%", "p%y", "_ay", "pa_"), now,
        now.plus(LEASE), 10);

    assertThat(ids(pY)).containsExactly(underscore.id());
    assertThat(percent).isEmpty();
    assertThat(ids(claim("kit-3", now, 10))).containsExactly(pay.id(), payBare.id(), percentDetail.id());
  }

  @Test
  void aClaimedEventIsNotClaimableUntilItsLeaseEndsThenAnotherClaimTakesItOver() throws Exception {
    OutboxEvent e = event("sink");
    enqueue(e);
    ClaimedEvent first = single(claim("kit-a", now, 10));

    List<ClaimedEvent> meanwhile = claim("kit-b", now, 10);
    List<ClaimedEvent> justBefore = claim("kit-b", now.plus(LEASE).minusMillis(1), 10);
    ClaimedEvent taken = single(claim("kit-b", now.plus(LEASE), 10));

    assertThat(meanwhile).isEmpty();
    assertThat(justBefore).isEmpty();
    assertThat(taken.seq()).isEqualTo(first.seq());
    assertThat(taken.attempts()).as("a lapsed lease is no attempt").isZero();
    assertThat(taken.message().attempt()).isEqualTo(1);
    OutboxEntry entry = entry(e.id());
    assertThat(entry.leaseOwner()).isEqualTo("kit-b");
    assertThat(entry.leaseUntil()).isEqualTo(now.plus(LEASE).plus(LEASE));
  }

  @Test
  void aStaleTokenChangesNothingAndCountsOnlyTheEventsItStillHolds() throws Exception {
    OutboxEvent x = event("sink");
    OutboxEvent y = event("sink");
    enqueue(x, y);
    List<ClaimedEvent> old = claim("kit-a", now, 10);
    Instant later = now.plus(LEASE);
    ClaimedEvent takenX = single(claim("kit-b", later, 1));
    ClaimedEvent oldX = old.get(0);

    int lateDelivery = delivered("kit-a", later, oldX);
    int lateFailure = failed("kit-a", later, retry(oldX, "late", 500, later.plusSeconds(1)));
    int lateRelease = store.release("kit-a", List.of(oldX), later);
    int both = delivered("kit-a", later, old.get(0), old.get(1));

    assertThat(takenX.message().id()).isEqualTo(x.id());
    assertThat(List.of(lateDelivery, lateFailure, lateRelease)).containsOnly(0);
    assertThat(both).as("only y is still leased to kit-a").isEqualTo(1);
    OutboxEntry xEntry = entry(x.id());
    assertThat(xEntry.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(xEntry.leaseOwner()).isEqualTo("kit-b");
    assertThat(xEntry.attempts()).isZero();
    assertThat(xEntry.lastError()).isNull();
    assertThat(xEntry.history()).isEmpty();
    assertThat(entry(y.id()).status()).isEqualTo(OutboxStatus.DELIVERED);
    assertThat(delivered("kit-b", later, takenX)).isEqualTo(1);
    assertThat(entry(x.id()).status()).isEqualTo(OutboxStatus.DELIVERED);
  }

  @Test
  void theHolderOfALapsedLeaseStillFinishesOrReleasesWhileNoOtherClaimTookTheEvent() throws Exception {
    OutboxEvent finished = event("sink");
    OutboxEvent released = event("sink");
    enqueue(finished, released);
    List<ClaimedEvent> c = claim("kit-a", now, 10);
    Instant lapsed = now.plus(LEASE).plus(LEASE);

    int delivered = delivered("kit-a", lapsed, c.get(0));
    int givenBack = store.release("kit-a", List.of(c.get(1)), lapsed);

    assertThat(delivered).isEqualTo(1);
    assertThat(givenBack).isEqualTo(1);
    assertThat(entry(finished.id()).status()).isEqualTo(OutboxStatus.DELIVERED);
    assertThat(entry(released.id()).leaseOwner()).isNull();
    assertThat(entry(released.id()).availableAt()).isEqualTo(lapsed);
  }

  // ------------------------------------------------------------------------------------------------------ outcomes

  @Test
  void aDeliveredEventIsFinishedWithItsAttemptCountedAndIsNotClaimedAgain() throws Exception {
    OutboxEvent e = event("sink");
    enqueue(e);
    ClaimedEvent c = single(claim("kit-1", now, 10));

    int changed = delivered("kit-1", now.plusSeconds(2), c);

    assertThat(changed).isEqualTo(1);
    OutboxEntry entry = entry(e.id());
    assertThat(entry.status()).isEqualTo(OutboxStatus.DELIVERED);
    assertThat(entry.attempts()).isEqualTo(1);
    assertThat(entry.attemptsSinceReplay()).isEqualTo(1);
    assertThat(entry.finishedAt()).isEqualTo(now.plusSeconds(2));
    assertThat(entry.leaseOwner()).isNull();
    assertThat(entry.leaseUntil()).isNull();
    assertThat(entry.lastError()).isNull();
    assertThat(claim("kit-2", now.plus(Duration.ofDays(1)), 10)).isEmpty();
  }

  @Test
  void deleteDeliveredRemovesTheEvent() throws Exception {
    OutboxEvent e = event("sink");
    OutboxEvent kept = event("sink");
    enqueue(e, kept);
    List<ClaimedEvent> claimed = claim("kit-1", now, 10);

    int changed = store.finish("kit-1", List.of(claimed.get(0)), List.of(), true, now);

    assertThat(changed).isEqualTo(1);
    assertThat(admin().find(e.id())).isEmpty();
    assertThat(entryIds(admin().list(OutboxQuery.all()).entries())).containsExactly(kept.id());
    assertThat(admin().stats(EnumSet.allOf(OutboxStatus.class), now).count(OutboxStatus.DELIVERED)).isZero();
  }

  @Test
  void aFailureSchedulesTheNextAttemptAndJoinsTheHistoryUntilTheEventDies() throws Exception {
    OutboxEvent e = event("sink");
    enqueue(e);
    ClaimedEvent c1 = single(claim("kit-1", now, 10));

    int first = failed("kit-1", now.plusSeconds(1), retry(c1, "503 from sink", 503, now.plusSeconds(10)));

    assertThat(first).isEqualTo(1);
    OutboxEntry waiting = entry(e.id());
    assertThat(waiting.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(waiting.attempts()).isEqualTo(1);
    assertThat(waiting.attemptsSinceReplay()).isEqualTo(1);
    assertThat(waiting.availableAt()).isEqualTo(now.plusSeconds(10));
    assertThat(waiting.lastError()).isEqualTo("503 from sink");
    assertThat(waiting.leaseOwner()).isNull();
    assertThat(waiting.leaseUntil()).isNull();
    assertThat(waiting.finishedAt()).isNull();
    assertThat(waiting.history()).containsExactly(new OutboxAttempt(1, now.plusSeconds(1), "503 from sink", 503));
    assertThat(claim("kit-2", now.plusSeconds(10).minusMillis(1), 10)).isEmpty();

    ClaimedEvent c2 = single(claim("kit-2", now.plusSeconds(10), 10));
    int second = failed("kit-2", now.plusSeconds(11), dead(c2, "410 gone", now.plusSeconds(11)));

    assertThat(c2.attempts()).isEqualTo(1);
    assertThat(c2.message().attempt()).isEqualTo(2);
    assertThat(second).isEqualTo(1);
    OutboxEntry dead = entry(e.id());
    assertThat(dead.status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(dead.attempts()).isEqualTo(2);
    assertThat(dead.lastError()).isEqualTo("410 gone");
    assertThat(dead.finishedAt()).isNull();
    assertThat(dead.history()).containsExactly(new OutboxAttempt(1, now.plusSeconds(1), "503 from sink", 503),
        new OutboxAttempt(2, now.plusSeconds(11), "410 gone", null));
    assertThat(claim("kit-3", now.plus(Duration.ofDays(1)), 10)).isEmpty();
  }

  @Test
  void theHistoryKeepsOnlyTheNewestAttempts() throws Exception {
    OutboxEvent e = event("sink");
    enqueue(e);
    int limit = historyLimit();
    int attempts = limit + 3;
    Instant at = now;

    for (int i = 1; i <= attempts; i++) {
      ClaimedEvent c = single(claim("kit-" + i, at, 1));
      assertThat(c.attempts()).isEqualTo(i - 1);
      assertThat(failed("kit-" + i, at, retry(c, "failure " + i, 500, at.plusMillis(1)))).isEqualTo(1);
      at = at.plusMillis(1);
    }

    OutboxEntry entry = entry(e.id());
    assertThat(entry.attempts()).isEqualTo(attempts);
    assertThat(entry.history()).hasSize(limit);
    assertThat(entry.history().get(0)).isEqualTo(new OutboxAttempt(4, now.plusMillis(3), "failure 4", 500));
    assertThat(entry.history().get(limit - 1))
        .isEqualTo(new OutboxAttempt(attempts, now.plusMillis(attempts - 1), "failure " + attempts, 500));
  }

  @Test
  void anErrorIsKeptUpToAThousandCharacters() throws Exception {
    OutboxEvent fits = event("sink");
    OutboxEvent tooLong = event("sink");
    enqueue(fits, tooLong);
    List<ClaimedEvent> claimed = claim("kit-1", now, 10);
    String thousand = "e".repeat(999) + "!";
    String longer = "f".repeat(1500);

    failed("kit-1", now, retry(claimed.get(0), thousand, null, now.plusSeconds(1)),
        retry(claimed.get(1), longer, null, now.plusSeconds(1)));

    assertThat(entry(fits.id()).lastError()).isEqualTo(thousand);
    assertThat(entry(fits.id()).history().get(0).error()).isEqualTo(thousand);
    OutboxEntry cut = entry(tooLong.id());
    assertThat(cut.lastError()).hasSizeLessThanOrEqualTo(1000).startsWith("f".repeat(999));
    assertThat(cut.history().get(0).error()).isEqualTo(cut.lastError());
  }

  @Test
  void releaseGivesEventsBackDueAtOnceWithoutCountingAnAttempt() throws Exception {
    OutboxEvent e = event("sink");
    enqueue(e);
    ClaimedEvent c = single(claim("kit-1", now, 10));

    int byAnother = store.release("kit-2", List.of(c), now.plusSeconds(1));
    int byTheHolder = store.release("kit-1", List.of(c), now.plusSeconds(1));

    assertThat(byAnother).isZero();
    assertThat(byTheHolder).isEqualTo(1);
    OutboxEntry entry = entry(e.id());
    assertThat(entry.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(entry.attempts()).isZero();
    assertThat(entry.availableAt()).isEqualTo(now.plusSeconds(1));
    assertThat(entry.leaseOwner()).isNull();
    assertThat(entry.leaseUntil()).isNull();
    assertThat(entry.history()).isEmpty();
    ClaimedEvent again = single(claim("kit-3", now.plusSeconds(1), 10));
    assertThat(again.attempts()).isZero();
    assertThat(again.message().attempt()).isEqualTo(1);
  }

  // ------------------------------------------------------------------------------------------------------ ordering

  @Test
  void onlyTheHeadOfAnOrderedAggregateAndDestinationIsClaimable() throws Exception {
    OutboxEvent unorderedFirst = event("kit.event", "acct-1", "sink:a");
    OutboxEvent o1 = event("kit.ordered", "acct-1", "sink:a");
    OutboxEvent o2 = event("kit.ordered", "acct-1", "sink:a");
    OutboxEvent o3 = event("kit.ordered", "acct-1", "sink:a");
    OutboxEvent otherDestination = event("kit.ordered", "acct-1", "sink:b");
    OutboxEvent otherAggregate = event("kit.ordered", "acct-2", "sink:a");
    OutboxEvent otherCase = event("kit.ordered", "ACCT-1", "sink:a");
    OutboxEvent trailingSpace = event("kit.ordered", "acct-1 ", "sink:a");
    OutboxEvent otherType = OutboxEvent.builder("kit.ordered").aggregate("order", "acct-1").payload("{}")
        .destination("sink:a").build();
    enqueue(now, unordered(unorderedFirst), ordered(o1), ordered(o2), ordered(o3), ordered(otherDestination),
        ordered(otherAggregate), ordered(otherCase), ordered(trailingSpace), ordered(otherType));

    List<ClaimedEvent> heads = claim("kit-1", now, 10);
    List<ClaimedEvent> behindALeasedHead = claim("kit-2", now, 10);
    ClaimedEvent head = heads.get(1);
    failed("kit-1", now, retry(head, "busy", 503, now.plusSeconds(5)));
    List<ClaimedEvent> behindARetry = claim("kit-3", now.plusSeconds(5).minusMillis(1), 10);
    ClaimedEvent retried = single(claim("kit-4", now.plusSeconds(5), 10));
    delivered("kit-4", now.plusSeconds(5), retried);
    List<ClaimedEvent> next = claim("kit-5", now.plusSeconds(5), 10);

    assertThat(ids(heads)).as("aggregates differ by type, case and trailing spaces").containsExactly(
        unorderedFirst.id(), o1.id(), otherDestination.id(), otherAggregate.id(), otherCase.id(), trailingSpace.id(),
        otherType.id());
    assertThat(behindALeasedHead).isEmpty();
    assertThat(behindARetry).isEmpty();
    assertThat(retried.message().id()).isEqualTo(o1.id());
    assertThat(ids(next)).containsExactly(o2.id());
  }

  @Test
  void aDeadHeadParksItsAggregateUntilItIsDiscardedOrReplayed() throws Exception {
    OutboxEvent o1 = event("kit.ordered", "acct-1", "sink");
    OutboxEvent o2 = event("kit.ordered", "acct-1", "sink");
    OutboxEvent o3 = event("kit.ordered", "acct-1", "sink");
    enqueue(now, ordered(o1), ordered(o2), ordered(o3));
    Instant far = now.plus(Duration.ofDays(1));

    failed("kit-1", now, dead(single(claim("kit-1", now, 10)), "refused", now));
    List<ClaimedEvent> parked = claim("kit-2", far, 10);
    boolean discarded = admin().discard(o1.id(), far);
    ClaimedEvent second = single(claim("kit-3", far, 10));
    failed("kit-3", far, dead(second, "refused", far));
    List<ClaimedEvent> parkedAgain = claim("kit-4", far, 10);
    boolean replayed = admin().replay(o2.id(), far);
    ClaimedEvent replayedHead = single(claim("kit-5", far, 10));
    delivered("kit-5", far, replayedHead);
    List<ClaimedEvent> last = claim("kit-6", far, 10);

    assertThat(parked).isEmpty();
    assertThat(discarded).isTrue();
    assertThat(second.message().id()).isEqualTo(o2.id());
    assertThat(parkedAgain).isEmpty();
    assertThat(replayed).isTrue();
    assertThat(replayedHead.message().id()).as("the replayed head, while o3 still waits").isEqualTo(o2.id());
    assertThat(ids(last)).containsExactly(o3.id());
  }

  // ----------------------------------------------------------------------------------------------------- operators

  @Test
  void listPagesBySeqAndFiltersWithEachEntrysHistory() throws Exception {
    OutboxEvent e1 = event("kit.a", "x1", "sink:a");
    OutboxEvent e2 = event("kit.b", "x2", "sink:b");
    OutboxEvent e3 = OutboxEvent.builder("kit.a").aggregate("order", "x1").payload("{}").destination("sink:a")
        .build();
    OutboxEvent e4 = event("kit.a", "x1", "sink");
    OutboxEvent e5 = event("kit.b", "x1", "sink:a");
    enqueue(e1, e2, e3, e4, e5);
    List<ClaimedEvent> claimed = claim("kit-1", now, 10);
    delivered("kit-1", now, claimed.get(1));
    failed("kit-1", now, dead(claimed.get(4), "refused", now));
    store.release("kit-1", List.of(claimed.get(0), claimed.get(2), claimed.get(3)), now);

    OutboxPage first = admin().list(OutboxQuery.all().limit(2));
    OutboxPage second = admin().list(OutboxQuery.all().limit(2).after(first.nextCursor().orElseThrow()));
    OutboxPage third = admin().list(OutboxQuery.all().limit(2).after(second.nextCursor().orElseThrow()));
    OutboxPage exactlyFull = admin().list(OutboxQuery.all().limit(5));

    assertThat(entryIds(first.entries())).containsExactly(e1.id(), e2.id());
    assertThat(first.nextCursor()).hasValue(first.entries().get(1).seq());
    assertThat(entryIds(second.entries())).containsExactly(e3.id(), e4.id());
    assertThat(entryIds(third.entries())).containsExactly(e5.id());
    assertThat(third.nextCursor()).isEmpty();
    assertThat(exactlyFull.entries()).hasSize(5);
    assertThat(exactlyFull.nextCursor()).isEmpty();
    assertThat(listed(OutboxQuery.status(OutboxStatus.PENDING))).containsExactly(e1.id(), e3.id(), e4.id());
    assertThat(listed(OutboxQuery.all().type("kit.b"))).containsExactly(e2.id(), e5.id());
    assertThat(listed(OutboxQuery.all().destination("sink:a"))).containsExactly(e1.id(), e3.id(), e5.id());
    assertThat(listed(OutboxQuery.all().destination("sink"))).containsExactly(e4.id());
    assertThat(listed(OutboxQuery.all().aggregate("account", "x1"))).containsExactly(e1.id(), e4.id(), e5.id());
    assertThat(listed(OutboxQuery.all().after(claimed.get(2).seq()))).containsExactly(e4.id(), e5.id());
    List<OutboxEntry> deadB = admin().list(OutboxQuery.status(OutboxStatus.DEAD).type("kit.b")).entries();
    assertThat(entryIds(deadB)).containsExactly(e5.id());
    assertThat(deadB.get(0).history()).containsExactly(new OutboxAttempt(1, now, "refused", null));
  }

  private List<UUID> listed(OutboxQuery query) {
    return entryIds(admin().list(query).entries());
  }

  @Test
  void summariesPageAsListDoesWithThePayloadsStoredSizeInsteadOfThePayload() throws Exception {
    String multibyte = "{\"name\":\"Zo\u00eb \u2713 \ud83d\ude00\"}";
    String large = "{\"blob\":\"" + "x".repeat(300_000) + "\"}";
    String sealed = Encryption.TEXT_PREFIX + "AAECAwQ";
    OutboxEvent small = event("kit.a", "s1", "sink:a");
    OutboxEvent wide = OutboxEvent.builder("kit.b").aggregate("order", "s2").payload(multibyte)
        .header("trace", "t-1").destination("sink:b").build();
    OutboxEvent big = OutboxEvent.builder("kit.a").aggregate("order", "s3").payload(large).destination("sink:a")
        .build();
    OutboxEvent closed = OutboxEvent.builder("kit.b").aggregate("order", "s4").payload(sealed).destination("sink:a")
        .build();
    OutboxEvent done = event("kit.a", "s5", "sink");
    enqueue(small, wide, big, closed, done);
    List<ClaimedEvent> claimed = claim("kit-1", now, 10);
    delivered("kit-1", now, claimed.get(4));
    failed("kit-1", now, dead(claimed.get(1), "refused", now), retry(claimed.get(2), "busy", 503, now));
    store.release("kit-1", List.of(claimed.get(0), claimed.get(3)), now);

    OutboxSummaryPage first = admin().summaries(OutboxQuery.all().limit(2));
    OutboxSummaryPage second = admin().summaries(OutboxQuery.all().limit(2).after(first.nextCursor().orElseThrow()));
    OutboxSummaryPage third = admin().summaries(OutboxQuery.all().limit(2).after(second.nextCursor().orElseThrow()));
    OutboxSummaryPage all = admin().summaries(OutboxQuery.all());

    List<OutboxSummary> paged = new ArrayList<>(first.entries());
    paged.addAll(second.entries());
    paged.addAll(third.entries());
    assertThat(first.nextCursor()).isEqualTo(admin().list(OutboxQuery.all().limit(2)).nextCursor());
    assertThat(third.nextCursor()).isEmpty();
    assertThat(paged).isEqualTo(all.entries());
    assertThat(all.entries()).as("everything but the payload and headers, as the full listing has it")
        .isEqualTo(admin().list(OutboxQuery.all()).entries().stream().map(OutboxSummary::of).toList());
    assertThat(all.entries()).extracting(OutboxSummary::id)
        .containsExactly(small.id(), wide.id(), big.id(), closed.id(), done.id());
    long plain = "{\"n\":1}".length();
    assertThat(all.entries()).extracting(OutboxSummary::payloadBytes).containsExactly(plain,
        (long) multibyte.getBytes(StandardCharsets.UTF_8).length, (long) large.length(), (long) sealed.length(), plain);
    assertThat(all.entries()).extracting(OutboxSummary::payloadSealed).containsExactly(false, false, false, true,
        false);
    OutboxSummary wideSummary = all.entries().get(1);
    assertThat(wideSummary.status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(wideSummary.history()).containsExactly(new OutboxAttempt(1, now, "refused", null));
    assertThat(all.entries().get(2).history()).containsExactly(new OutboxAttempt(1, now, "busy", 503));
    assertThat(all.entries().get(4).finished()).hasValue(now);
    assertThat(entryIds(admin().list(OutboxQuery.status(OutboxStatus.PENDING).type("kit.a")).entries()))
        .isEqualTo(admin().summaries(OutboxQuery.status(OutboxStatus.PENDING).type("kit.a")).entries().stream()
            .map(OutboxSummary::id).toList())
        .containsExactly(small.id(), big.id());
    assertThat(admin().summaries(OutboxQuery.all().destination("sink:a").aggregate("order", "s4")).entries())
        .extracting(OutboxSummary::id).containsExactly(closed.id());
    assertThat(entry(big.id()).payload()).as("the event's own view reads the payload").isEqualTo(large);
    assertThat(entry(wide.id()).payload()).isEqualTo(multibyte);
    assertThat(entry(wide.id()).headers()).containsEntry("trace", "t-1");
  }

  @Test
  void findKnowsOnlyStoredEvents() throws Exception {
    OutboxEvent e = event("sink");
    enqueue(e);

    assertThat(admin().find(e.id()).map(OutboxEntry::id)).hasValue(e.id());
    assertThat(admin().find(UUID.randomUUID())).isEmpty();
  }

  @Test
  void replayGivesAFinishedEventAFreshSetOfAttemptsAndKeepsItsHistory() throws Exception {
    OutboxEvent e = event("sink");
    enqueue(e);
    failed("kit-1", now, retry(single(claim("kit-1", now, 10)), "boom", 500, now.plusSeconds(1)));
    failed("kit-2", now.plusSeconds(2), dead(single(claim("kit-2", now.plusSeconds(1), 10)), "boom",
        now.plusSeconds(2)));

    boolean replayed = admin().replay(e.id(), now.plusSeconds(3));

    assertThat(replayed).isTrue();
    OutboxEntry pending = entry(e.id());
    assertThat(pending.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(pending.attempts()).isEqualTo(2);
    assertThat(pending.attemptsSinceReplay()).isZero();
    assertThat(pending.availableAt()).isEqualTo(now.plusSeconds(3));
    assertThat(pending.finishedAt()).isNull();
    assertThat(pending.leaseOwner()).isNull();
    assertThat(pending.history()).hasSize(2);
    ClaimedEvent c = single(claim("kit-3", now.plusSeconds(3), 10));
    assertThat(c.attempts()).isEqualTo(2);
    assertThat(c.attemptBase()).isEqualTo(2);
    assertThat(c.message().attempt()).isEqualTo(3);
    delivered("kit-3", now.plusSeconds(4), c);
    assertThat(entry(e.id()).attemptsSinceReplay()).isEqualTo(1);

    assertThat(admin().replay(e.id(), now.plusSeconds(5))).as("a delivered event").isTrue();
    assertThat(entry(e.id()).finishedAt()).isNull();
    assertThat(admin().discard(e.id(), now.plusSeconds(6))).isTrue();
    assertThat(admin().replay(e.id(), now.plusSeconds(7))).as("a discarded event").isTrue();
    OutboxEntry again = entry(e.id());
    assertThat(again.status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(again.attempts()).isEqualTo(3);
    assertThat(again.attemptsSinceReplay()).isZero();
    assertThat(again.finishedAt()).isNull();
  }

  @Test
  void replayRefusesPendingAndUnknownEvents() throws Exception {
    OutboxEvent leased = event("sink");
    OutboxEvent waiting = event("sink");
    enqueue(leased);
    single(claim("kit-1", now, 10));
    enqueue(waiting);

    boolean waitingReplayed = admin().replay(waiting.id(), now);
    boolean leasedReplayed = admin().replay(leased.id(), now);
    boolean unknownReplayed = admin().replay(UUID.randomUUID(), now);

    assertThat(List.of(waitingReplayed, leasedReplayed, unknownReplayed)).containsOnly(false);
    assertThat(entry(leased.id()).leaseOwner()).isEqualTo("kit-1");
    assertThat(entry(leased.id()).availableAt()).isEqualTo(now.plus(LEASE));
  }

  @Test
  void replayAllReplaysTheMatchingEventsInBatchesFromTheCursor() throws Exception {
    List<OutboxEvent> deadA = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      deadA.add(event("kit.a", "d" + i, "sink"));
    }
    OutboxEvent deadB = event("kit.b", "d5", "sink");
    OutboxEvent deliveredA = event("kit.a", "v", "sink");
    OutboxEvent pendingA = event("kit.a", "p", "sink");
    List<OutboxEvent> all = new ArrayList<>(deadA);
    all.add(deadB);
    all.add(deliveredA);
    all.add(pendingA);
    enqueue(all.toArray(OutboxEvent[]::new));
    List<ClaimedEvent> claimed = claim("kit-1", now, 10);
    List<FailedDelivery> deaths = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      deaths.add(dead(claimed.get(i), "refused", now));
    }
    store.finish("kit-1", List.of(claimed.get(6)), deaths, false, now);
    store.release("kit-1", List.of(claimed.get(7)), now);
    Instant at = now.plusSeconds(10);

    int afterTheThird = admin().replayAll(OutboxQuery.status(OutboxStatus.DEAD).type("kit.a")
        .after(claimed.get(2).seq()).limit(1), at);
    int theRest = admin().replayAll(OutboxQuery.status(OutboxStatus.DEAD).type("kit.a").limit(2), at);
    int deliveredOnes = admin().replayAll(OutboxQuery.status(OutboxStatus.DELIVERED), at);

    assertThat(afterTheThird).isEqualTo(2);
    assertThat(theRest).isEqualTo(3);
    assertThat(deliveredOnes).isEqualTo(1);
    for (OutboxEvent e : deadA) {
      OutboxEntry entry = entry(e.id());
      assertThat(entry.status()).isEqualTo(OutboxStatus.PENDING);
      assertThat(entry.availableAt()).isEqualTo(at);
      assertThat(entry.attemptsSinceReplay()).isZero();
    }
    assertThat(entry(deadB.id()).status()).isEqualTo(OutboxStatus.DEAD);
    assertThat(entry(deliveredA.id()).status()).isEqualTo(OutboxStatus.PENDING);
    assertThat(entry(pendingA.id()).availableAt()).as("pending events are left alone").isEqualTo(now);
  }

  @Test
  void replayAllNeedsAStatusOtherThanPending() throws Exception {
    OutboxEvent e = event("sink");
    enqueue(e);

    assertThatThrownBy(() -> admin().replayAll(OutboxQuery.all(), now.plusSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> admin().replayAll(OutboxQuery.status(OutboxStatus.PENDING), now.plusSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(entry(e.id()).availableAt()).isEqualTo(now);
  }

  @Test
  void discardGivesUpOnDeadAndUnleasedPendingEventsOnly() throws Exception {
    OutboxEvent free = event("sink");
    OutboxEvent leased = event("sink");
    OutboxEvent dead = event("sink");
    OutboxEvent done = event("sink");
    enqueue(dead, done);
    List<ClaimedEvent> claimed = claim("kit-1", now, 10);
    store.finish("kit-1", List.of(claimed.get(1)), List.of(dead(claimed.get(0), "refused", now)), false, now);
    enqueue(leased);
    enqueue(free);
    Instant at = now.plusSeconds(1);
    List<ClaimedEvent> leasedClaim = store.claim("kit-2", List.of(), at, at.plus(LEASE), 1);

    boolean freeDiscarded = admin().discard(free.id(), at);
    boolean leasedNow = admin().discard(leased.id(), at);
    boolean leasedJustBefore = admin().discard(leased.id(), at.plus(LEASE).minusMillis(1));
    boolean leasedAtTheEnd = admin().discard(leased.id(), at.plus(LEASE));
    boolean deadDiscarded = admin().discard(dead.id(), at);
    boolean deliveredOne = admin().discard(done.id(), at);
    boolean twice = admin().discard(free.id(), at);
    boolean unknown = admin().discard(UUID.randomUUID(), at);
    int lateDelivery = delivered("kit-2", at.plus(LEASE), leasedClaim.get(0));

    assertThat(ids(leasedClaim)).containsExactly(leased.id());
    assertThat(freeDiscarded).as("a pending event no relay holds").isTrue();
    assertThat(List.of(leasedNow, leasedJustBefore)).containsOnly(false);
    assertThat(leasedAtTheEnd).isTrue();
    assertThat(deadDiscarded).isTrue();
    assertThat(List.of(deliveredOne, twice, unknown)).containsOnly(false);
    assertThat(lateDelivery).as("a discarded event is no relay's any more").isZero();
    OutboxEntry discarded = entry(leased.id());
    assertThat(discarded.status()).isEqualTo(OutboxStatus.DISCARDED);
    assertThat(discarded.finishedAt()).isEqualTo(at.plus(LEASE));
    assertThat(discarded.leaseOwner()).isNull();
    assertThat(entry(dead.id()).status()).isEqualTo(OutboxStatus.DISCARDED);
    assertThat(entry(done.id()).status()).isEqualTo(OutboxStatus.DELIVERED);
    assertThat(claim("kit-3", now.plus(Duration.ofDays(1)), 10)).isEmpty();
  }

  @Test
  void purgeDeletesOnlyEventsFinishedAtOrBeforeTheCutoffInBoundedBatches() throws Exception {
    Instant t1 = now.plusSeconds(10);
    Instant t2 = t1.plusSeconds(60);
    OutboxEvent v1 = event("sink");
    OutboxEvent v2 = event("sink");
    OutboxEvent v3 = event("sink");
    OutboxEvent discarded = event("sink");
    OutboxEvent laterOne = event("sink");
    OutboxEvent dead = event("sink");
    OutboxEvent pending = event("sink");
    enqueue(v1, v2, v3, discarded, laterOne, dead, pending);
    List<ClaimedEvent> c = claim("kit-1", now, 10);
    failed("kit-1", now, retry(c.get(0), "once", 500, now));
    ClaimedEvent v1Again = single(store.claim("kit-2", List.of(), now, now.plus(LEASE), 1));
    delivered("kit-2", t1, v1Again);
    store.finish("kit-1", List.of(c.get(1), c.get(2)), List.of(dead(c.get(5), "refused", t1)), false, t1);
    store.release("kit-1", List.of(c.get(3), c.get(6)), now);
    admin().discard(discarded.id(), t1);
    delivered("kit-1", t2, c.get(4));

    int firstBatch = admin().purge(t1, 3);
    int secondBatch = admin().purge(t1, 3);
    int nothingLeft = admin().purge(t1, 3);
    int beforeTheLaterOne = admin().purge(t2.minusMillis(1), 10);
    int theLaterOne = admin().purge(t2, 10);
    int never = admin().purge(now.plus(Duration.ofDays(365)), 10);

    assertThat(v1Again.message().id()).isEqualTo(v1.id());
    assertThat(List.of(firstBatch, secondBatch, nothingLeft)).containsExactly(3, 1, 0);
    assertThat(beforeTheLaterOne).isZero();
    assertThat(theLaterOne).isEqualTo(1);
    assertThat(never).as("dead and pending events are never purged").isZero();
    assertThat(listed(OutboxQuery.all())).containsExactly(dead.id(), pending.id());
    assertThat(admin().find(v1.id())).as("purged with its history").isEmpty();
    assertThat(entry(dead.id()).history()).hasSize(1);
  }

  @Test
  void purgeDoesNotWaitForATransactionThatEnqueuesAndHasNotEnded() throws Exception {
    OutboxEvent done = event("sink");
    enqueue(done);
    delivered("kit-1", now, single(claim("kit-1", now, 10)));
    OutboxEvent open = event("sink");
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      int purged = store.inTransaction(tx -> {
        store.enqueue(tx, List.of(unordered(open)), now.plusSeconds(1));
        Future<Integer> purge = pool.submit(() -> admin().purge(now.plusSeconds(1), 10));
        return purge.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      });

      assertThat(purged).isEqualTo(1);
      assertThat(listed(OutboxQuery.all())).containsExactly(open.id());
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void statsCountTheAskedStatusesAndTheAgeOfTheOldestPendingEvent() throws Exception {
    OutboxStats empty = admin().stats(EnumSet.allOf(OutboxStatus.class), now);
    OutboxEvent oldest = event("sink");
    OutboxEvent younger = event("sink");
    OutboxEvent done = event("sink");
    OutboxEvent dead = event("sink");
    OutboxEvent discarded = event("sink");
    enqueue(now.minusSeconds(30), unordered(oldest));
    enqueue(now.minusSeconds(10), unordered(younger));
    enqueue(now.minusSeconds(5), unordered(done), unordered(dead), unordered(discarded));
    List<ClaimedEvent> c = claim("kit-1", now, 10);
    store.finish("kit-1", List.of(c.get(2)), List.of(dead(c.get(3), "refused", now)), false, now);
    store.release("kit-1", List.of(c.get(4)), now);
    admin().discard(discarded.id(), now);

    OutboxStats all = admin().stats(EnumSet.allOf(OutboxStatus.class), now);
    OutboxStats some = admin().stats(EnumSet.of(OutboxStatus.DELIVERED, OutboxStatus.DEAD), now);
    OutboxStats early = admin().stats(EnumSet.of(OutboxStatus.PENDING), now.minusSeconds(40));

    assertThat(empty.counts()).containsOnly(Map.entry(OutboxStatus.PENDING, 0L), Map.entry(OutboxStatus.DELIVERED,
        0L), Map.entry(OutboxStatus.DEAD, 0L), Map.entry(OutboxStatus.DISCARDED, 0L));
    assertThat(empty.oldestPendingAge()).isEmpty();
    assertThat(all.counts()).as("leased events are pending").containsOnly(Map.entry(OutboxStatus.PENDING, 2L),
        Map.entry(OutboxStatus.DELIVERED, 1L), Map.entry(OutboxStatus.DEAD, 1L),
        Map.entry(OutboxStatus.DISCARDED, 1L));
    assertThat(all.oldestPendingAge()).hasValue(Duration.ofSeconds(30));
    assertThat(some.counts()).containsOnly(Map.entry(OutboxStatus.DELIVERED, 1L), Map.entry(OutboxStatus.DEAD, 1L));
    assertThat(some.oldestPendingAge()).as("pending was not asked for").isEmpty();
    assertThat(early.oldestPendingAge()).as("never negative").hasValue(Duration.ZERO);
  }

  // --------------------------------------------------------------------------------------------------- concurrency

  @Test
  void concurrentClaimsNeverHandOutAnEventTwice() throws Exception {
    int threads = 8;
    int events = 60;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 10; round++) {
        List<OutboxEvent> batch = new ArrayList<>();
        for (int i = 0; i < events; i++) {
          batch.add(event("sink:" + i % 3));
        }
        enqueue(batch.toArray(OutboxEvent[]::new));
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<List<UUID>>> claims = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          String token = "kit-" + round + "-" + t;
          claims.add(pool.submit(() -> {
            start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            List<UUID> mine = new ArrayList<>();
            for (int i = 0; i < events; i++) {
              List<ClaimedEvent> got = claim(token, now, 4);
              if (got.isEmpty()) {
                break;
              }
              mine.addAll(ids(got));
            }
            return mine;
          }));
        }
        List<UUID> claimed = new ArrayList<>();
        for (Future<List<UUID>> f : claims) {
          claimed.addAll(f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        }

        assertThat(claimed).as("round %d: no event twice", round).doesNotHaveDuplicates();
        assertThat(new HashSet<>(claimed)).as("round %d: every event once", round)
            .isEqualTo(new HashSet<>(entryIdsOf(batch)));
        assertThat(claim("kit-after-" + round, now, 10)).isEmpty();
      }
      // every lease ends at once: the takeovers race as the first claims did
      Instant leaseEnd = now.plus(LEASE);
      CyclicBarrier start = new CyclicBarrier(threads);
      List<Future<List<UUID>>> takeovers = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        String token = "kit-takeover-" + t;
        takeovers.add(pool.submit(() -> {
          start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
          List<UUID> mine = new ArrayList<>();
          for (int i = 0; i < 10 * events; i++) {
            List<ClaimedEvent> got = claim(token, leaseEnd, 4);
            if (got.isEmpty()) {
              break;
            }
            mine.addAll(ids(got));
          }
          return mine;
        }));
      }
      List<UUID> taken = new ArrayList<>();
      for (Future<List<UUID>> f : takeovers) {
        taken.addAll(f.get(WAIT.toSeconds(), TimeUnit.SECONDS));
      }
      assertThat(taken).as("takeovers: no event twice").doesNotHaveDuplicates().hasSize(10 * events);
    } finally {
      pool.shutdownNow();
    }
  }

  private static List<UUID> entryIdsOf(List<OutboxEvent> events) {
    List<UUID> ids = new ArrayList<>();
    for (OutboxEvent e : events) {
      ids.add(e.id());
    }
    return ids;
  }

  @Test
  void twoRelaysOnTheOutboxDeliverEveryEventOnceAndInOrderPerAggregate() throws Exception {
    Outbox outbox = Outbox.builder(store).clock(Clock.tickMillis(ZoneOffset.UTC))
        .orderedTypes(Set.of("kit.ordered")).build();
    List<OutboxEvent> events = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      for (int a = 0; a < 6; a++) {
        events.add(OutboxEvent.builder("kit.ordered").aggregate("account", "acct-" + a)
            .payload("{\"n\":" + i + "}").destination("sink:" + a % 2).build());
      }
    }
    for (int i = 0; i < 60; i++) {
      events.add(event("sink:" + i % 3));
    }
    for (int from = 0; from < events.size(); from += 20) {
      List<OutboxEvent> chunk = events.subList(from, Math.min(events.size(), from + 20));
      outbox.inTransaction(tx -> outbox.enqueueAll(tx, chunk));
    }
    RecordingTransport sink = new RecordingTransport();
    List<OutboxRelay> relays = List.of(relay(outbox, "kit-a", sink), relay(outbox, "kit-b", sink));
    ExecutorService pool = Executors.newFixedThreadPool(relays.size());
    long deadline = System.nanoTime() + WAIT.toNanos();
    try {
      CyclicBarrier start = new CyclicBarrier(relays.size());
      List<Future<?>> runs = new ArrayList<>();
      for (OutboxRelay relay : relays) {
        runs.add(pool.submit(() -> {
          start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
          // each relay claims at least once after the barrier, so the two race even when one alone could drain
          // the outbox before the other's first look
          do {
            relay.runOnce();
          } while (sink.distinct() < events.size() && System.nanoTime() < deadline);
          return null;
        }));
      }
      for (Future<?> run : runs) {
        run.get(WAIT.toSeconds() + 10, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }

    for (OutboxEvent e : events) {
      assertThat(sink.sends(e.id())).as("sends of %s", e).isEqualTo(1);
    }
    for (int a = 0; a < 6; a++) {
      List<UUID> expected = new ArrayList<>();
      for (OutboxEvent e : events) {
        if (e.type().equals("kit.ordered") && e.aggregateId().equals("acct-" + a)) {
          expected.add(e.id());
        }
      }
      assertThat(sink.sentOf("acct-" + a)).as("order of acct-%d", a).isEqualTo(expected);
    }
    OutboxStats stats = admin().stats(EnumSet.allOf(OutboxStatus.class), now);
    assertThat(stats.count(OutboxStatus.DELIVERED)).isEqualTo(events.size());
    assertThat(stats.count(OutboxStatus.PENDING)).isZero();
  }

  private static OutboxRelay relay(Outbox outbox, String name, OutboxTransport transport) {
    return OutboxRelay.builder(outbox).name(name).route("sink", transport).batchSize(7)
        .lease(Duration.ofMinutes(10)).build();
  }

  /** Counts every message it is given, and keeps the order of ordered events per aggregate. */
  private static final class RecordingTransport implements OutboxTransport {
    private final Map<UUID, AtomicInteger> sends = new ConcurrentHashMap<>();
    private final Map<String, List<UUID>> ordered = new ConcurrentHashMap<>();

    @Override
    public DeliveryResult send(OutboxMessage message) {
      if (message.type().equals("kit.ordered")) {
        List<UUID> sent = ordered.computeIfAbsent(message.aggregateId(), k -> new ArrayList<>());
        synchronized (sent) {
          sent.add(message.id());
        }
      }
      sends.computeIfAbsent(message.id(), k -> new AtomicInteger()).incrementAndGet();
      return DeliveryResult.delivered();
    }

    int distinct() {
      return sends.size();
    }

    int sends(UUID id) {
      AtomicInteger n = sends.get(id);
      return n == null ? 0 : n.get();
    }

    List<UUID> sentOf(String aggregateId) {
      List<UUID> sent = ordered.getOrDefault(aggregateId, List.of());
      synchronized (sent) {
        return List.copyOf(sent);
      }
    }
  }
}
