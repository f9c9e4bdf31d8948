package dev.idem.outbox;

import dev.idem.core.StoreException;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.outbox.spi.InboxTransactions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * The inbox of exactly-once consumers: {@link #process} records (consumer, event id) in the caller's transaction and
 * runs the handler there, so the effect and the record commit together or not at all. A redelivered event finds its
 * record and is skipped, getting the first run's result; the same id with another payload is refused. Where the
 * records live is an {@link InboxStore}: {@code JdbcInboxStore} in {@code idem-jdbc}, or
 * {@link dev.idem.outbox.memory.InMemoryInboxStore} for tests.
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder(JdbcInboxStore.builder(dataSource).build()).build();
 * InboxResult r = inbox.inTransaction(tx -> inbox.process(tx, "billing", InboxEvent.of(eventId, body),
 *     (t, event) -> {
 *       applyCharge(t.unwrap(Connection.class), event.payload());
 *       return "ok";
 *     }));
 * }</pre>
 *
 * <p>Concurrent deliveries of one event serialise on its record: the second waits for the first's transaction,
 * then sees the record (a duplicate) or, if the first rolled back, processes the event itself.
 *
 * <p>{@link #processBatch} does the same for a batch of events (a broker poll) with a fixed number of store round
 * trips whatever its size (on PostgreSQL and MariaDB, one statement records the whole batch), running the handler for
 * the new events only. A single event is a batch of one.
 *
 * <p>The transactions the inbox opens itself ({@link #inTransaction}, {@link #processBatchAndCommit}: the broker
 * consumers and the webhook receiver) are new transactions of its store unless {@link Builder#transactions} says
 * otherwise; the Spring Boot starter runs them as Spring transactions, so that a handler's {@code JdbcTemplate}
 * writes, events and after-commit callbacks belong to the inbox's transaction.
 *
 * <p>The payload is compared by the SHA-256 of its exact bytes, so a re-serialised payload (other whitespace or key
 * order) counts as different: send the same bytes again, as brokers and webhook senders do.
 *
 * <p>Immutable and thread-safe: share one per store.
 */
public final class Inbox {
  private static final HexFormat HEX = HexFormat.of();
  /** Never used itself: {@link #newSha256} copies it. Null when the provider's digest does not clone. */
  private static final MessageDigest SHA_256 = cloneableSha256();
  /** Whether a handler class keeps the default {@link InboxHandler#handleAll}, which handles one event at a time. */
  private static final ClassValue<Boolean> ONE_AT_A_TIME = new ClassValue<>() {
    @Override
    protected Boolean computeValue(Class<?> type) {
      try {
        return type.getMethod("handleAll", StoreTransaction.class, List.class).getDeclaringClass()
            == InboxHandler.class;
      } catch (NoSuchMethodException e) {
        return false;
      }
    }
  };

  private final InboxStore store;
  private final Clock clock;
  private final int maxResultChars;
  private final InboxListener listener;
  private final int maxBatchSize;
  private final InboxTransactions transactions;

  private Inbox(Builder b) {
    this.store = b.store;
    this.clock = b.clock;
    this.maxResultChars = b.maxResultChars;
    this.listener = b.listener;
    this.maxBatchSize = b.maxBatchSize;
    this.transactions = b.transactions == null ? InboxTransactions.of(b.store) : b.transactions;
  }

  /** A builder of an inbox on {@code store}. */
  public static Builder builder(InboxStore store) {
    return new Builder(store);
  }

  /** Where the records live. */
  public InboxStore store() {
    return store;
  }

  /** How this inbox opens the transactions it runs itself ({@link Builder#transactions}). */
  public InboxTransactions transactions() {
    return transactions;
  }

  /**
   * Runs {@code work} in a new transaction ({@link Builder#transactions}: by default, of the store) and commits it;
   * rolls back when it throws. For consumers that own their transaction, such as a broker listener that acknowledges
   * after this returns: {@code inbox.inTransaction(tx -> inbox.process(tx, consumer, event, handler))}.
   */
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    return transactions.inTransaction(work);
  }

  /**
   * Processes {@code event} once for {@code consumer}, in {@code tx}, the caller's open transaction of the store's
   * kind (for JDBC, {@code JdbcTransaction.of(connection)} with auto-commit off). Does not end the transaction.
   *
   * @return whether it was a duplicate, and the kept result
   * @throws InboxPayloadMismatchException when the id was processed before with another payload
   * @throws InboxHandlerException wrapping what the handler threw, or when the handler broke the transaction (rolled
   *     it back, or on PostgreSQL caught an SQL error that aborted it); roll the transaction back
   */
  public InboxResult process(StoreTransaction tx, String consumer, InboxEvent event, InboxHandler handler) {
    return processBatch(tx, consumer, List.of(Objects.requireNonNull(event, "event")), handler).get(0);
  }

  /**
   * Processes a batch of events once each for {@code consumer}, in {@code tx}, running the handler's
   * {@link InboxHandler#handleAll} once for the batch's new events (none when there are none). Does not end the
   * transaction. The arguments are checked before the first write.
   *
   * <p>An id that comes twice in the batch with the same payload is processed once: the later one is a duplicate
   * with the first one's result. With another payload the batch is refused before anything is written. The listener
   * hears of every event of the batch: processed, or duplicate (a repeat within the batch too).
   *
   * @param events at most {@link Builder#maxBatchSize} events, not empty
   * @return one result per event of {@code events}, in the same order
   * @throws InboxPayloadMismatchException for the first event (in the batch's order) whose id was processed before,
   *     or comes earlier in the batch, with another payload; no handler ran: roll the transaction back
   * @throws InboxHandlerException wrapping what the handler threw (naming the event it failed on, or the batch's
   *     first new event for a handler that overrides {@link InboxHandler#handleAll}), or when it
   *     returned a list of another size, or a result longer than {@link Builder#maxResultChars} (naming that event),
   *     or broke the transaction; roll the transaction back, nothing of the batch counts
   */
  public List<InboxResult> processBatch(StoreTransaction tx, String consumer, List<InboxEvent> events,
      InboxHandler handler) {
    Objects.requireNonNull(tx, "tx");
    return processBatch(tx, consumer, batch(consumer, events, handler), handler);
  }

  /** {@link #processBatch(StoreTransaction, String, List, InboxHandler)} of a checked batch: records first. */
  private List<InboxResult> processBatch(StoreTransaction tx, String consumer, Batch b, InboxHandler handler) {
    Instant now = clock.instant();
    List<InboxStore.Recorded> recorded = store.record(tx, consumer, b.distinct, now);
    InboxStore.Recorded[] byIndex = new InboxStore.Recorded[b.size()];
    List<InboxEvent> fresh = new ArrayList<>();
    for (int k = 0; k < b.distinct.size(); k++) {
      InboxStore.Recorded r = recorded.get(k);
      int i = b.distinctAt.get(k);
      if (r.status() == InboxStore.Status.MISMATCH) {
        throw mismatch(consumer, b.events.get(i).eventId());
      }
      byIndex[i] = r;
      if (r.status() == InboxStore.Status.NEW) {
        fresh.add(b.events.get(i));
      }
    }

    List<String> results = List.of();
    if (!fresh.isEmpty()) {
      results = effects(tx, consumer, Collections.unmodifiableList(fresh), handler);
      store.keep(tx, consumer, fresh.stream().map(InboxEvent::eventId).toList(), results);
    }
    return outcomes(consumer, b, byIndex, results, now);
  }

  /** The checked batch, its events' digests, and its distinct events (the first of each id). */
  private Batch batch(String consumer, List<InboxEvent> events, InboxHandler handler) {
    Limits.text("consumer", consumer, Limits.NAME);
    Objects.requireNonNull(events, "events");
    Objects.requireNonNull(handler, "handler");
    List<InboxEvent> batch = new ArrayList<>(events);
    if (batch.isEmpty()) {
      throw new IllegalArgumentException("events must not be empty");
    }
    if (batch.size() > maxBatchSize) {
      throw new IllegalArgumentException("a batch of " + batch.size() + " events is larger than maxBatchSize "
          + maxBatchSize + ": split it, or raise maxBatchSize (at most 10000)");
    }
    for (int i = 0; i < batch.size(); i++) {
      Objects.requireNonNull(batch.get(i), "events[" + i + "]");
    }

    int n = batch.size();
    String[] hashes = new String[n];
    int[] first = new int[n]; // the index of the first event with the same id
    Map<String, Integer> firstById = new HashMap<>();
    List<InboxStore.Entry> distinct = new ArrayList<>();
    List<Integer> distinctAt = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      InboxEvent event = batch.get(i);
      hashes[i] = sha256(event.payload());
      Integer earlier = firstById.putIfAbsent(event.eventId(), i);
      first[i] = earlier == null ? i : earlier;
      if (earlier == null) {
        distinct.add(new InboxStore.Entry(event.eventId(), event.source(), hashes[i]));
        distinctAt.add(i);
      } else if (!hashes[earlier].equals(hashes[i])) {
        throw mismatch(consumer, event.eventId());
      }
    }
    return new Batch(batch, first, Collections.unmodifiableList(distinct), distinctAt);
  }

  /**
   * A checked batch.
   *
   * @param first for each event, the index of the first event with the same id
   * @param distinct the first event of each id, as the store records it
   * @param distinctAt where each of {@code distinct} is in {@code events}
   */
  private record Batch(List<InboxEvent> events, int[] first, List<InboxStore.Entry> distinct,
      List<Integer> distinctAt) {
    int size() {
      return events.size();
    }

    /** The first event of each id, in the batch's order: the events the handler gets when none is recorded. */
    List<InboxEvent> distinctEvents() {
      return distinctAt.stream().map(events::get).toList();
    }
  }

  /**
   * One result per event, telling the listener of each: {@code byIndex} holds what the store found for the first event
   * of each id, and {@code results} the handler's results of the new ones, in order.
   */
  private List<InboxResult> outcomes(String consumer, Batch b, InboxStore.Recorded[] byIndex, List<String> results,
      Instant now) {
    int n = b.size();
    InboxResult[] outcome = new InboxResult[n];
    int next = 0;
    for (int i = 0; i < n; i++) {
      int first = b.first[i];
      if (first != i) {
        outcome[i] = new InboxResult(true, outcome[first].result(), outcome[first].firstReceivedAt());
      } else if (byIndex[i].status() == InboxStore.Status.NEW) {
        outcome[i] = new InboxResult(false, results.get(next++), now);
      } else {
        outcome[i] = new InboxResult(true, byIndex[i].result(), byIndex[i].firstReceivedAt());
      }
      safely(outcome[i].duplicate() ? () -> listener.duplicate(consumer) : () -> listener.processed(consumer));
    }
    return List.of(outcome);
  }

  /**
   * Opens a new transaction ({@link Builder#transactions}: by default, of the store), processes the batch in it
   * ({@link #processBatch}) and commits; rolls back on any failure. For consumers that own their transaction, such
   * as a broker listener that acknowledges or commits its offsets after this returns.
   */
  public List<InboxResult> processBatchAndCommit(String consumer, List<InboxEvent> events, InboxHandler handler) {
    return processBatchAndCommit(consumer, events, handler, false);
  }

  /**
   * As {@link #processBatchAndCommit(String, List, InboxHandler)}, with the caller's hint of whether the batch is a
   * first delivery: its events have most likely not been delivered before (a message the broker delivers for the
   * first time, say). Duplicates are still found and skipped whatever the hint says; the hint only picks the order
   * that is cheaper when it is right.
   *
   * <p>For a first delivery, on a store that offers it ({@link InboxStore#recordsLast}: PostgreSQL, in memory), in a
   * transaction the inbox begins (not one it would join: {@link InboxTransactions#joinsOpenTransaction}), the inbox
   * runs the handler on the batch's events first and then writes their records, with the results, in one statement;
   * a store that owns the transaction sends it with the COMMIT, so that the transaction costs the round trips of the
   * handler's own. When an event turns out to be recorded already, or the handler throws, or the commit
   * fails, the transaction rolls back and the batch runs again in the usual order, records first, where a duplicate's
   * handler does not run. So the handler's writes count once either way; what the handler does outside the
   * transaction (a call to another service) may happen for a duplicate, or again for a failure, in that order.
   *
   * <p>In that order the records are written after the handler, so what the usual order checks after the handler, that
   * they are still in the transaction, has nothing to check. The JDBC store's own transactions hand the handler a
   * connection that refuses to commit, roll back or switch auto-commit on; a handler that goes around it (through the
   * driver's connection) and rolls back or commits may leave effects without records, or records without effects. A
   * handler that swallows an SQL error is still caught on PostgreSQL: the records' insert fails in the aborted
   * transaction, which rolls back, and the usual order skips a duplicate or fails with that error. One that switches
   * auto-commit on through the driver's connection is too, for a new event: the JDBC store commits the records after
   * the writes the switch committed, and the call fails; for a duplicate its writes have then counted twice. A handler
   * that marks the transaction rollback-only fails the call, in either order.
   *
   * @param firstDelivery whether the batch is most likely new: the handler first; false records first (the method
   *     without this parameter)
   */
  public List<InboxResult> processBatchAndCommit(String consumer, List<InboxEvent> events, InboxHandler handler,
      boolean firstDelivery) {
    Batch b = batch(consumer, events, handler);
    if (firstDelivery && store.recordsLast() && !transactions.joinsOpenTransaction()) {
      List<InboxResult> done = recordingLast(consumer, b, handler);
      if (done != null) {
        return done;
      }
    }
    try {
      return transactions.inTransaction(tx -> {
        List<InboxResult> results = processBatch(tx, consumer, b, handler);
        requireCommittable(tx, consumer, b);
        return results;
      });
    } catch (Exception e) {
      throw committing(consumer, b, e);
    }
  }

  /**
   * Fails when the handler marked {@code tx} rollback-only: the transaction would roll back while the call reported
   * its events processed, and a consumer would acknowledge them.
   */
  private static void requireCommittable(StoreTransaction tx, String consumer, Batch b) {
    if (tx.isRollbackOnly()) {
      throw new InboxHandlerException(consumer, b.events.get(b.distinctAt.get(0)).eventId(), new IllegalStateException(
          "the handler marked the transaction rollback-only: nothing of the batch commits"));
    }
  }

  /** What the failure of a transaction of {@code b} throws: itself if unchecked, else a {@link StoreException}. */
  private RuntimeException committing(String consumer, Batch b, Exception e) {
    if (e instanceof RuntimeException r) {
      return r;
    }
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    return new StoreException(store.name(), "committing " + b.size() + " events for " + consumer + " failed: " + e,
        null, false, false, e);
  }

  /**
   * The first-delivery order: the handler on the batch's distinct events, then their records, committed. Returns the
   * outcome; or null when the transaction rolled back and the usual order must tell (an event was recorded already,
   * the handler threw, perhaps for a duplicate, or the commit failed or its answer was lost). What the usual order
   * could not do better is thrown: a failure before the handler ran (no connection, no transaction), and the store
   * finding, after the handler returned, that the handler broke the transaction.
   */
  private List<InboxResult> recordingLast(String consumer, Batch b, InboxHandler handler) {
    List<InboxEvent> fresh = b.distinctEvents();
    Instant now = clock.instant();
    boolean[] reached = new boolean[2]; // the handler was called; it returned
    List<String> results;
    try {
      results = transactions.inTransaction(tx -> {
        reached[0] = true;
        List<String> returned = effects(tx, consumer, fresh, handler);
        reached[1] = true;
        requireCommittable(tx, consumer, b);
        if (!store.recordLast(tx, consumer, b.distinct, returned, now)) {
          throw RecordedBefore.INSTANCE; // a throw rolls back whatever the transactions
        }
        return returned;
      });
    } catch (RecordedBefore e) {
      return null;
    } catch (Exception e) {
      if (!reached[0] || e instanceof InboxHandlerException && reached[1]) {
        throw committing(consumer, b, e);
      }
      return null;
    }
    InboxStore.Recorded recorded = new InboxStore.Recorded(InboxStore.Status.NEW, null, now);
    InboxStore.Recorded[] byIndex = new InboxStore.Recorded[b.size()];
    for (int i : b.distinctAt) {
      byIndex[i] = recorded;
    }
    return outcomes(consumer, b, byIndex, results, now);
  }

  /** Thrown in the first-delivery order to roll back when an event was recorded already; never leaves the inbox. */
  private static final class RecordedBefore extends RuntimeException {
    static final RecordedBefore INSTANCE = new RecordedBefore();

    private RecordedBefore() {
      super("an event of the batch was recorded already", null, false, false);
    }
  }

  /**
   * Runs the handler for the new events; one checked result (or null) per event, in order. A handler that keeps the
   * default {@link InboxHandler#handleAll} is called here once per event, as that default would, so that a failure
   * names the event it happened on.
   */
  private List<String> effects(StoreTransaction tx, String consumer, List<InboxEvent> fresh, InboxHandler handler) {
    String firstId = fresh.get(0).eventId();
    List<String> returned;
    if (ONE_AT_A_TIME.get(handler.getClass())) {
      returned = new ArrayList<>(fresh.size());
      for (InboxEvent event : fresh) {
        returned.add(run(consumer, event.eventId(), () -> handler.handle(tx, event)));
      }
    } else {
      returned = run(consumer, firstId, () -> handler.handleAll(tx, fresh));
    }
    if (returned == null) {
      return Collections.nCopies(fresh.size(), null);
    }
    if (returned.size() != fresh.size()) {
      throw new InboxHandlerException(consumer, firstId, new IllegalStateException("the handler returned "
          + returned.size() + " results for " + fresh.size() + " new events: return one per event, in order,"
          + " or null"));
    }
    for (int i = 0; i < fresh.size(); i++) {
      String result = returned.get(i);
      if (result != null && result.length() > maxResultChars) {
        throw new InboxHandlerException(consumer, fresh.get(i).eventId(), new IllegalStateException("the handler's"
            + " result has " + result.length() + " characters; at most " + maxResultChars + " are kept"));
      }
    }
    return new ArrayList<>(returned);
  }

  /** Runs (part of) the handler, wrapping what it throws, unless it threw an {@link InboxHandlerException} itself. */
  private static <T> T run(String consumer, String eventId, Callable<T> work) {
    try {
      return work.call();
    } catch (InboxHandlerException e) {
      throw e;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      throw new InboxHandlerException(consumer, eventId, e);
    }
  }

  private InboxPayloadMismatchException mismatch(String consumer, String eventId) {
    safely(() -> listener.payloadMismatch(consumer, eventId));
    return new InboxPayloadMismatchException(consumer, eventId);
  }

  /** Whether {@code consumer} has processed {@code eventId} (committed). */
  public boolean contains(String consumer, String eventId) {
    return store.admin().contains(consumer, eventId);
  }

  /**
   * Deletes up to {@code batchSize} records received more than {@code retention} ago. Keep records longer than any
   * redelivery can take (a broker's redelivery window, a webhook sender's retry schedule, days not minutes).
   *
   * @return how many were deleted
   */
  public int purge(Duration retention, int batchSize) {
    if (retention.isNegative() || batchSize < 1) {
      throw new IllegalArgumentException("retention must not be negative and batchSize must be positive");
    }
    return store.admin().purge(clock.instant().minus(retention), batchSize);
  }

  /** The SHA-256 of the payload, as 64 lowercase hex characters: the digest the store compares. */
  public static String sha256(byte[] payload) {
    return HEX.formatHex(newSha256().digest(payload));
  }

  /** A new SHA-256 digest: a copy of {@link #SHA_256} where the provider allows, cheaper than a provider look-up. */
  private static MessageDigest newSha256() {
    try {
      return SHA_256 != null ? (MessageDigest) SHA_256.clone() : MessageDigest.getInstance("SHA-256");
    } catch (CloneNotSupportedException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java platform", e);
    }
  }

  private static MessageDigest cloneableSha256() {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      digest.clone();
      return digest;
    } catch (CloneNotSupportedException | NoSuchAlgorithmException e) {
      return null; // a provider whose digest does not clone: a look-up per digest
    }
  }

  private static void safely(Runnable r) {
    try {
      r.run();
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable ignored) {
      // listeners must not change the outcome, whatever they throw
    }
  }

  @Override
  public String toString() {
    return "Inbox{" + store.name() + '}';
  }

  /** Builds an {@link Inbox}. Mutable and not thread-safe; {@link #build} copies it into an immutable inbox. */
  public static final class Builder {
    private final InboxStore store;
    private Clock clock = Clock.systemUTC();
    private int maxResultChars = 4000;
    private int maxBatchSize = 1000;
    private InboxListener listener = new InboxListener() {};
    private InboxTransactions transactions;

    private Builder(InboxStore store) {
      this.store = Objects.requireNonNull(store, "store");
    }

    /** The clock of {@code received_at} and {@link Inbox#purge} (default UTC system clock). */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The longest handler result kept (default 4000 characters). */
    public Builder maxResultChars(int max) {
      // 16,000 characters of up to 4 bytes fit MariaDB's TEXT column
      this.maxResultChars = Limits.range("maxResultChars", max, 0, 16_000);
      return this;
    }

    /**
     * The most events {@link Inbox#processBatch} takes at once (default 1000, at most 10000: on MariaDB each event is
     * six parameters of one statement, and a server-side prepared statement takes at most 65535).
     */
    public Builder maxBatchSize(int max) {
      this.maxBatchSize = Limits.range("maxBatchSize", max, 1, 10_000);
      return this;
    }

    /** Hooks for meters (default: none). */
    public Builder listener(InboxListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * How the inbox opens the transactions it runs itself, in {@link Inbox#inTransaction} and
     * {@link Inbox#processBatchAndCommit} (default: {@link InboxTransactions#of} the store, a new transaction of its
     * own). They must be transactions of the store's database, handing the work a transaction of the store's kind.
     */
    public Builder transactions(InboxTransactions transactions) {
      this.transactions = Objects.requireNonNull(transactions, "transactions");
      return this;
    }

    public Inbox build() {
      return new Inbox(this);
    }
  }
}
