package dev.idem.test.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.spi.InboxAdmin;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.outbox.spi.InboxStore.Entry;
import dev.idem.outbox.spi.InboxStore.Recorded;
import dev.idem.outbox.spi.InboxStore.Status;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link InboxStore} must pass, through the SPI (and, for concurrent deliveries, through
 * {@link Inbox}). Extend it and implement {@link #createStore()}: each test gets a store of its own with no records,
 * since a purge sees every record of a store. The tests pass the time to the store ({@code now}), in whole
 * milliseconds; nothing sleeps.
 *
 * <p>Two tests prove that a transaction recording an event waits for another transaction that recorded it and has not
 * ended. They learn that it waits from {@link #awaitBlocked}, which by default watches the waiting thread: enough for
 * a store that waits in Java, or in a driver's socket read. A store on a database should override {@link #session}
 * and {@link #awaitBlocked} to read the database's own view of lock waits.
 */
public abstract class InboxStoreContract {
  /** How long a test waits for other threads at most; a bound, never what is tested. */
  protected static final Duration WAIT = Duration.ofSeconds(60);
  protected static final String BILLING = "billing";
  protected static final String SHIPPING = "shipping";
  protected static final String DIGEST_A = Inbox.sha256("{\"amount\":100}".getBytes(StandardCharsets.UTF_8));
  protected static final String DIGEST_B = Inbox.sha256("{\"amount\":200}".getBytes(StandardCharsets.UTF_8));

  protected InboxStore store;
  /** The test's start time, in whole milliseconds. */
  protected Instant now;

  /** A store with no records, for one test. Called before each test. */
  protected abstract InboxStore createStore() throws Exception;

  /** Releases what {@link #createStore()} made (tables, pools). */
  protected void closeStore(InboxStore store) throws Exception {}

  /**
   * Called in {@code tx}, on its thread, before the transaction records: what {@link #awaitBlocked} recognises the
   * transaction by, such as its database session's id. The default is the current thread.
   */
  protected Object session(StoreTransaction tx) throws Exception {
    return Thread.currentThread();
  }

  /**
   * Returns once the transaction of {@code waiter} waits for the record of {@code eventId} that the transaction of
   * {@code holder} wrote and has not ended (both from {@link #session}); fails when {@code work}, the waiter's work,
   * ends first, or after {@link #WAIT}. The default watches the waiter's thread, the default session: it must be
   * inside the store's {@code record}, parked, blocked, or in a native method (a driver waiting for its server).
   */
  protected void awaitBlocked(Object holder, Object waiter, String eventId, Future<?> work) throws Exception {
    if (!(waiter instanceof Thread thread)) {
      throw new IllegalStateException("session(tx) was overridden: override awaitBlocked(...) as well");
    }
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      assertThat(work.isDone()).as("the second transaction ended while the first held %s", eventId).isFalse();
      StackTraceElement[] stack = thread.getStackTrace();
      Thread.State state = thread.getState();
      boolean stopped = state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING
          || state == Thread.State.BLOCKED || stack.length > 0 && stack[0].isNativeMethod();
      if (stopped && inRecord(stack)) {
        return;
      }
      assertThat(System.nanoTime()).as("the second transaction never waited for %s", eventId).isLessThan(deadline);
      LockSupport.parkNanos(Duration.ofMillis(2).toNanos());
    }
  }

  private boolean inRecord(StackTraceElement[] stack) {
    for (StackTraceElement frame : stack) {
      if (frame.getMethodName().equals("record") || frame.getMethodName().equals("recordLast")) {
        for (Class<?> c = store.getClass(); c != null; c = c.getSuperclass()) {
          if (c.getName().equals(frame.getClassName())) {
            return true;
          }
        }
      }
    }
    return false;
  }

  @BeforeEach
  void setUpInboxStore() throws Exception {
    store = createStore();
    now = Instant.ofEpochMilli(System.currentTimeMillis());
  }

  @AfterEach
  void tearDownInboxStore() throws Exception {
    closeStore(store);
  }

  // ------------------------------------------------------------------------------------------------------ helpers

  protected InboxAdmin admin() {
    return store.admin();
  }

  protected static Entry entry(String eventId) {
    return new Entry(eventId, "kit", DIGEST_A);
  }

  protected static Entry entry(String eventId, String digest) {
    return new Entry(eventId, null, digest);
  }

  /**
   * Records the entries for {@code consumer} at {@code at} in one committed transaction, keeping {@code result} for
   * each new one.
   */
  protected List<Recorded> recordCommitted(String consumer, Instant at, String result, Entry... entries)
      throws Exception {
    return store.inTransaction(tx -> recordAndKeep(tx, consumer, at, result, entries));
  }

  protected List<Recorded> recordAndKeep(StoreTransaction tx, String consumer, Instant at, String result,
      Entry... entries) {
    List<Recorded> recorded = store.record(tx, consumer, List.of(entries), at);
    List<String> fresh = new ArrayList<>();
    for (int i = 0; i < entries.length; i++) {
      if (recorded.get(i).status() == Status.NEW) {
        fresh.add(entries[i].eventId());
      }
    }
    if (!fresh.isEmpty()) {
      store.keep(tx, consumer, fresh, Collections.nCopies(fresh.size(), result));
    }
    return recorded;
  }

  protected static List<Status> statuses(List<Recorded> recorded) {
    List<Status> statuses = new ArrayList<>();
    for (Recorded r : recorded) {
      statuses.add(r.status());
    }
    return statuses;
  }

  protected static Recorded fresh(Instant at) {
    return new Recorded(Status.NEW, null, at);
  }

  protected static Recorded duplicate(String result, Instant firstReceivedAt) {
    return new Recorded(Status.DUPLICATE, result, firstReceivedAt);
  }

  // ---------------------------------------------------------------------------------------------------- recording

  @Test
  void aNewEventIsRecordedAndARedeliveryIsADuplicateWithTheKeptResult() throws Exception {
    Instant later = now.plusSeconds(60);

    List<Recorded> first = recordCommitted(BILLING, now, "charged ch_1", entry("evt-1"));
    List<Recorded> again = recordCommitted(BILLING, later, "ignored", entry("evt-1"));

    assertThat(first).containsExactly(fresh(now));
    assertThat(again).as("the first run's result and time").containsExactly(duplicate("charged ch_1", now));
    assertThat(admin().contains(BILLING, "evt-1")).isTrue();
    assertThat(admin().contains(BILLING, "evt-2")).isFalse();
  }

  @Test
  void theSameIdWithAnotherDigestIsAMismatchAndLeavesTheRecordAlone() throws Exception {
    recordCommitted(BILLING, now, "charged", entry("evt-1", DIGEST_A));

    List<Recorded> other = recordCommitted(BILLING, now.plusSeconds(1), "other", entry("evt-1", DIGEST_B));
    List<Recorded> same = recordCommitted(BILLING, now.plusSeconds(2), "same", entry("evt-1", DIGEST_A));

    assertThat(statuses(other)).containsExactly(Status.MISMATCH);
    assertThat(other.get(0).firstReceivedAt()).isEqualTo(now);
    assertThat(same).containsExactly(duplicate("charged", now));
  }

  @Test
  void consumersAreIndependent() throws Exception {
    List<Recorded> billing = recordCommitted(BILLING, now, "b", entry("evt-1"));
    List<Recorded> shipping = recordCommitted(SHIPPING, now, "s", entry("evt-1"));

    assertThat(billing).containsExactly(fresh(now));
    assertThat(shipping).containsExactly(fresh(now));
    assertThat(recordCommitted(SHIPPING, now, null, entry("evt-1"))).containsExactly(duplicate("s", now));
  }

  @Test
  void idsAndConsumersDifferByCaseAndTrailingSpaces() throws Exception {
    List<Recorded> billing = recordCommitted(BILLING, now, "r", entry("evt-a"), entry("EVT-A"), entry("evt-a "));
    List<Recorded> otherCase = recordCommitted("Billing", now, "r", entry("evt-a"));
    List<Recorded> trailingSpace = recordCommitted(BILLING + " ", now, "r", entry("evt-a"));

    assertThat(billing).containsExactly(fresh(now), fresh(now), fresh(now));
    assertThat(otherCase).containsExactly(fresh(now));
    assertThat(trailingSpace).containsExactly(fresh(now));
  }

  @Test
  void aLongResultIsKeptWhole() throws Exception {
    String result = "\u00e9\ud83d\ude00".repeat(5000) + "x".repeat(1000);
    recordCommitted(BILLING, now, result, entry("evt-long"));

    List<Recorded> again = recordCommitted(BILLING, now.plusSeconds(1), null, entry("evt-long"));

    assertThat(result).hasSize(16_000);
    assertThat(again).containsExactly(duplicate(result, now));
  }

  @Test
  void aRolledBackRecordLeavesNothingSoTheEventIsNewAgain() throws Exception {
    Exception boom = new Exception("boom");

    store.inTransaction(tx -> {
      recordAndKeep(tx, BILLING, now, "marked", entry("evt-marked"));
      tx.setRollbackOnly();
      return null;
    });
    Throwable thrown = catchThrowable(() -> store.inTransaction(tx -> {
      recordAndKeep(tx, BILLING, now, "thrown", entry("evt-thrown"));
      throw boom;
    }));

    assertThat(thrown).as("the work's exception, unchanged").isSameAs(boom);
    assertThat(admin().contains(BILLING, "evt-marked")).isFalse();
    assertThat(admin().contains(BILLING, "evt-thrown")).isFalse();
    Instant later = now.plusSeconds(1);
    assertThat(recordCommitted(BILLING, later, "r", entry("evt-marked"), entry("evt-thrown")))
        .containsExactly(fresh(later), fresh(later));
  }

  @Test
  void aRecordIsInvisibleToOtherTransactionsUntilItCommits() throws Exception {
    boolean seenInside = store.inTransaction(tx -> {
      recordAndKeep(tx, BILLING, now, "r", entry("evt-1"));
      return admin().contains(BILLING, "evt-1");
    });

    assertThat(seenInside).isFalse();
    assertThat(admin().contains(BILLING, "evt-1")).isTrue();
  }

  @Test
  void aBatchAnswersInItsOwnOrderMixingNewDuplicateAndMismatch() throws Exception {
    String longest = "L" + "x".repeat(254);
    String emoji = "\ud83d\ude00-6";
    recordCommitted(BILLING, now, "rb", entry("b-2"));
    recordCommitted(BILLING, now, null, entry("d-4"));
    Instant later = now.plusSeconds(5);
    Entry[] batch = {entry("\u00e9-5"), entry("d-4"), entry("c-3"), entry("b-2", DIGEST_B), entry("a-1"),
        entry(longest), entry(emoji), entry("Z-7"), entry("\u4e2d-8")};

    List<Recorded> recorded = store.inTransaction(tx -> {
      List<Recorded> r = store.record(tx, BILLING, List.of(batch), later);
      store.keep(tx, BILLING, List.of("\u00e9-5", "c-3", "a-1", longest, emoji, "Z-7", "\u4e2d-8"),
          List.of("r\u00e9", "rc", "ra", "rl", "r\ud83d\ude00", "rZ", "r\u4e2d"));
      return r;
    });
    List<Recorded> again = store.inTransaction(tx -> store.record(tx, BILLING, List.of(entry("Z-7"), entry(longest),
        entry("b-2"), entry(emoji), entry("d-4"), entry("\u00e9-5")), later.plusSeconds(1)));

    assertThat(recorded).containsExactly(fresh(later), duplicate(null, now), fresh(later),
        new Recorded(Status.MISMATCH, recorded.get(3).result(), now), fresh(later), fresh(later), fresh(later),
        fresh(later), fresh(later));
    assertThat(again).containsExactly(duplicate("rZ", later), duplicate("rl", later), duplicate("rb", now),
        duplicate("r\ud83d\ude00", later), duplicate(null, now), duplicate("r\u00e9", later));
  }

  @Test
  void keepStoresTheResultsAndANullKeepsNothing() throws Exception {
    store.inTransaction(tx -> {
      store.record(tx, BILLING, List.of(entry("a"), entry("b"), entry("c")), now);
      store.keep(tx, BILLING, List.of("a", "b", "c"), Arrays.asList("ra", null, "rc"));
      return null;
    });

    List<Recorded> again = store.inTransaction(tx -> store.record(tx, BILLING,
        List.of(entry("a"), entry("b"), entry("c")), now.plusSeconds(1)));

    assertThat(again).containsExactly(duplicate("ra", now), duplicate(null, now), duplicate("rc", now));
  }

  @Test
  void keepFailsForAnEventThatIsNotRecorded() throws Exception {
    Throwable withoutResult = catchThrowable(() -> store.inTransaction(tx -> {
      store.record(tx, BILLING, List.of(entry("recorded")), now);
      store.keep(tx, BILLING, List.of("never-recorded"), Collections.singletonList(null));
      return null;
    }));
    Throwable withResult = catchThrowable(() -> store.inTransaction(tx -> {
      store.record(tx, BILLING, List.of(entry("recorded")), now);
      store.keep(tx, BILLING, List.of("never-recorded"), List.of("r"));
      return null;
    }));

    assertThat(withoutResult).isInstanceOf(InboxHandlerException.class);
    assertThat(withResult).isInstanceOf(InboxHandlerException.class);
    assertThat(admin().contains(BILLING, "recorded")).as("both transactions rolled back").isFalse();
    assertThat(admin().contains(BILLING, "never-recorded")).isFalse();
  }

  @Test
  void anEmptyBatchRecordsNothing() throws Exception {
    List<Recorded> recorded = store.inTransaction(tx -> {
      List<Recorded> r = store.record(tx, BILLING, List.of(), now);
      store.keep(tx, BILLING, List.of(), List.of());
      return r;
    });

    assertThat(recorded).isEmpty();
    assertThat(admin().purge(now, 10)).isZero();
  }

  @Test
  void aTransactionOfAnotherKindOrOneThatEndedIsRefused() throws Exception {
    StoreTransaction ended = store.inTransaction(tx -> tx);

    assertThatThrownBy(() -> store.record(new ForeignTransaction(), BILLING,
        List.of(entry("evt-1")), now)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> store.record(ended, BILLING, List.of(entry("evt-1")), now))
        .isInstanceOf(IllegalStateException.class);
    assertThat(admin().contains(BILLING, "evt-1")).isFalse();
  }

  @Test
  void purgeDeletesRecordsReceivedAtOrBeforeTheCutoffUpToTheLimit() throws Exception {
    Instant old = now.minus(Duration.ofDays(8));
    Instant recent = old.plus(Duration.ofHours(1));
    recordCommitted(BILLING, old, null, entry("old-1"), entry("old-2"));
    recordCommitted(SHIPPING, old, "r", entry("old-3"));
    recordCommitted(BILLING, recent, null, entry("recent"));

    int first = admin().purge(old, 2);
    int second = admin().purge(old, 2);
    int nothingLeft = admin().purge(old, 2);
    int beforeTheRecentOne = admin().purge(recent.minusMillis(1), 10);

    assertThat(List.of(first, second, nothingLeft, beforeTheRecentOne)).containsExactly(2, 1, 0, 0);
    assertThat(admin().contains(BILLING, "recent")).isTrue();
    assertThat(admin().contains(BILLING, "old-1")).isFalse();
    assertThat(admin().contains(SHIPPING, "old-3")).isFalse();
    assertThat(recordCommitted(BILLING, now, null, entry("old-1"))).as("purged, so new again")
        .containsExactly(fresh(now));
    assertThat(admin().purge(recent, 10)).isEqualTo(1);
  }

  @Test
  void purgeDoesNotWaitForATransactionThatRecordsAndHasNotEnded() throws Exception {
    Instant old = now.minus(Duration.ofDays(8));
    recordCommitted(BILLING, old, null, entry("old-1"), entry("old-2"));
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      int purged = store.inTransaction(tx -> {
        recordAndKeep(tx, BILLING, now, "r", entry("open"));
        Future<Integer> purge = pool.submit(() -> admin().purge(old, 10));
        return purge.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      });

      assertThat(purged).isEqualTo(2);
      assertThat(admin().contains(BILLING, "open")).isTrue();
    } finally {
      pool.shutdownNow();
    }
  }

  // --------------------------------------------------------------------------------------------------- concurrency

  @Test
  void aSecondTransactionWaitsForTheFirstAndFindsItsRecordOnceItCommits() throws Exception {
    Instant later = now.plusSeconds(1);

    List<Recorded> second = raceOnOneEvent(true, recordingAround(later));

    assertThat(second).containsExactly(fresh(later), duplicate("first", now), fresh(later));
    assertThat(recordCommitted(BILLING, later, null, entry("evt-held"))).containsExactly(duplicate("first", now));
  }

  @Test
  void aSecondTransactionWaitsForTheFirstAndRecordsTheEventItselfOnceItRollsBack() throws Exception {
    Instant later = now.plusSeconds(1);

    List<Recorded> second = raceOnOneEvent(false, recordingAround(later));

    assertThat(second).containsExactly(fresh(later), fresh(later), fresh(later));
    assertThat(recordCommitted(BILLING, later, null, entry("evt-held"))).containsExactly(duplicate("second", later));
  }

  /** The second transaction's work of {@link #raceOnOneEvent}: a batch around the held event, recorded first. */
  private TransactionWork<List<Recorded>> recordingAround(Instant later) {
    return tx -> recordAndKeep(tx, BILLING, later, "second", entry("evt-before"), entry("evt-held"), entry("evt-next"));
  }

  /**
   * A first transaction records {@code evt-held} and holds it; a second runs {@code secondWork}, which records a batch
   * around it and must wait; then the first commits or rolls back. Returns what the second's work returned.
   */
  protected <T> T raceOnOneEvent(boolean commit, TransactionWork<T> secondWork) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch end = new CountDownLatch(1);
    CompletableFuture<Object> holder = new CompletableFuture<>();
    CompletableFuture<Object> waiter = new CompletableFuture<>();
    try {
      Future<List<Recorded>> first = pool.submit(() -> store.inTransaction(tx -> {
        holder.complete(session(tx));
        List<Recorded> r = recordAndKeep(tx, BILLING, now, "first", entry("evt-held"));
        held.countDown();
        assertThat(end.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        if (!commit) {
          tx.setRollbackOnly();
        }
        return r;
      }));
      assertThat(held.await(WAIT.toSeconds(), TimeUnit.SECONDS)).as("the first transaction recorded").isTrue();
      Future<T> second = pool.submit(() -> store.inTransaction(tx -> {
        waiter.complete(session(tx));
        return secondWork.execute(tx);
      }));
      try {
        awaitBlocked(sessionOf(holder, first), sessionOf(waiter, second), "evt-held", second);
      } finally {
        end.countDown();
      }
      assertThat(first.get(WAIT.toSeconds(), TimeUnit.SECONDS)).containsExactly(fresh(now));
      return second.get(WAIT.toSeconds(), TimeUnit.SECONDS);
    } finally {
      end.countDown();
      pool.shutdownNow();
    }
  }

  /** The session {@code work} reports, or its failure if it fails before reporting one. */
  private static Object sessionOf(CompletableFuture<Object> session, Future<?> work) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      try {
        return session.get(10, TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        if (work.isDone()) {
          work.get();
          throw new AssertionError("the transaction ended without reporting its session", e);
        }
        assertThat(System.nanoTime()).as("the transaction reports its session").isLessThan(deadline);
      }
    }
  }

  // ------------------------------------------------------------------------------------------- recording last

  /** What {@link InboxStore#recordLast} returns in a committed transaction of the store for {@code entries}. */
  protected boolean recordLastCommitted(Instant at, List<String> results, Entry... entries) throws Exception {
    return store.inTransaction(tx -> store.recordLast(tx, BILLING, List.of(entries), results, at));
  }

  /** A store that offers the first-delivery order passes {@link RecordingLastInboxStoreContract} as well. */
  @Test
  void recordLastRecordsNewEventsWithTheirResultsOrIsRefusedByAStoreThatRecordsFirstOnly() throws Exception {
    if (!store.recordsLast()) {
      assertThatThrownBy(() -> recordLastCommitted(now, Collections.singletonList(null), entry("a")))
          .isInstanceOf(UnsupportedOperationException.class);
      assertThat(admin().contains(BILLING, "a")).isFalse();
      return;
    }

    assertThat(this).as("a store that offers the first-delivery order passes RecordingLastInboxStoreContract: extend"
        + " it instead of InboxStoreContract").isInstanceOf(RecordingLastInboxStoreContract.class);
    boolean recorded = recordLastCommitted(now, Arrays.asList("rb", null, "rc"), entry("b"), entry("a"), entry("c"));

    assertThat(recorded).isTrue();
    assertThat(recordCommitted(BILLING, now.plusSeconds(1), "ignored", entry("a"), entry("b"), entry("c")))
        .containsExactly(duplicate(null, now), duplicate("rb", now), duplicate("rc", now));
    assertThat(admin().contains(SHIPPING, "a")).isFalse();
  }

  @Test
  void overlappingBatchesInOppositeOrdersDoNotDeadlock() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 50; round++) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
          ids.add("r" + round + "-" + (char) ('a' + i));
        }
        List<String> ascending = ids.subList(0, 8);
        List<String> descending = new ArrayList<>(ids.subList(2, 10));
        Collections.reverse(descending);
        CyclicBarrier start = new CyclicBarrier(2);
        List<Future<List<Recorded>>> runs = new ArrayList<>();
        for (List<String> batch : List.of(ascending, descending)) {
          Entry[] entries = batch.stream().map(InboxStoreContract::entry).toArray(Entry[]::new);
          runs.add(pool.submit(() -> {
            start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            return recordCommitted(BILLING, now, null, entries);
          }));
        }
        Map<String, Integer> newCount = new HashMap<>();
        List<List<String>> batches = List.of(ascending, descending);
        for (int t = 0; t < 2; t++) {
          List<Recorded> recorded = runs.get(t).get(WAIT.toSeconds(), TimeUnit.SECONDS);
          for (int k = 0; k < recorded.size(); k++) {
            newCount.merge(batches.get(t).get(k), recorded.get(k).status() == Status.NEW ? 1 : 0, Integer::sum);
            assertThat(recorded.get(k).status()).isNotEqualTo(Status.MISMATCH);
          }
        }
        for (String id : ids) {
          assertThat(newCount.get(id)).as("round %d, %s: new exactly once", round, id).isEqualTo(1);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void concurrentDeliveriesThroughTheInboxRunTheHandlerOncePerEvent() throws Exception {
    Inbox inbox = Inbox.builder(store).clock(Clock.tickMillis(ZoneOffset.UTC)).build();
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 10; round++) {
        String id = "delivery-" + round;
        AtomicInteger runs = new AtomicInteger();
        InboxHandler handler = (tx, event) -> {
          runs.incrementAndGet();
          return "applied " + event.eventId();
        };
        InboxEvent event = new InboxEvent(id, "kit", "{\"amount\":100}".getBytes(StandardCharsets.UTF_8));
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<InboxResult>> deliveries = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          deliveries.add(pool.submit(() -> {
            start.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            return inbox.inTransaction(tx -> inbox.process(tx, BILLING, event, handler));
          }));
        }
        int firstRuns = 0;
        for (Future<InboxResult> f : deliveries) {
          InboxResult r = f.get(WAIT.toSeconds(), TimeUnit.SECONDS);
          firstRuns += r.duplicate() ? 0 : 1;
          assertThat(r.result()).isEqualTo("applied " + id);
        }
        assertThat(firstRuns).as("round %d: one delivery ran the handler", round).isEqualTo(1);
        assertThat(runs).as("round %d: handler runs", round).hasValue(1);
        assertThat(inbox.contains(BILLING, id)).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
