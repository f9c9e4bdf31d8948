package dev.idem.outbox.spi;

import dev.idem.core.StoreException;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * Where an inbox records which events each consumer processed, so that a redelivered event is recognised.
 *
 * <p>Both hot methods run in the caller's open transaction, with the handler's effects between them:
 * {@link #record} writes the records, {@link #keep} keeps the results after the handler ran and checks that the
 * records are still part of the transaction. The effects and the records commit together or not at all. A store may
 * also offer the first-delivery order ({@link #recordsLast}): the handler first, then one write of the records with
 * their results ({@link #recordLast}), which fails when an event turns out to be recorded already.
 *
 * <p>Concurrent transactions that record the same event serialise on it: the second waits for the first to end,
 * then finds its record (a duplicate) or, if the first rolled back, records the event itself. Transactions that
 * record overlapping batches must not deadlock whatever the order of the batches.
 */
public interface InboxStore {

  /** The store's name, in log lines and exception messages. */
  String name();

  /** Runs the work in a new transaction of this store, as {@link OutboxStore#inTransaction} does. */
  <R> R inTransaction(TransactionWork<R> work) throws Exception;

  /**
   * Records the events for {@code consumer} in {@code tx}: an event seen for the first time is {@link Status#NEW}
   * (recorded at {@code now}); one recorded before, committed, is a {@link Status#DUPLICATE} when its digest is the
   * same and a {@link Status#MISMATCH} otherwise.
   *
   * @param events events with distinct ids, at most a few thousand; none records nothing
   * @return one outcome per event, in the order of {@code events}
   * @throws IllegalStateException when {@code tx} is not an open transaction of this store's kind
   */
  List<Recorded> record(StoreTransaction tx, String consumer, List<Entry> events, Instant now);

  /**
   * After the handler: keeps the non-null results of the events {@link #record} found new, and checks in the same
   * round trip that their records are still part of {@code tx}. The records of one {@link #record} call go together,
   * so a store may check any one of them.
   *
   * @param eventIds the ids of events that {@link #record} found new in {@code tx}, in the order they were recorded;
   *     for any other id (one committed by another transaction, say) what the store does is not defined
   * @param results one per id; null keeps nothing
   * @throws dev.idem.outbox.InboxHandlerException when the handler broke the transaction: it rolled it back, the
   *     database did so for an error the handler caught, or (PostgreSQL) the handler caught an error that aborted it;
   *     also when no record of the checked event exists at all (it was never recorded)
   */
  void keep(StoreTransaction tx, String consumer, List<String> eventIds, List<String> results);

  /**
   * Whether this store can take {@link #recordLast}: the first-delivery order, where the handler runs before the
   * records are written. A store says yes only if it can still tell, after the handler, that the handler broke the
   * transaction (an error it caught); the JDBC store on PostgreSQL does, as does the in-memory store. The default is
   * no: the inbox then always records first.
   */
  default boolean recordsLast() {
    return false;
  }

  /**
   * The first-delivery order, for events that have most likely not been delivered before: records events whose handler
   * has already run in {@code tx}, with the handler's results, as the transaction's last write; a store that owns
   * {@code tx} may commit it in the same round trip. All or nothing: when one of the events was recorded before
   * (committed), or by a concurrent transaction that commits while this one waits, or when the handler left the
   * transaction unable to record (it caught an error that aborted it), nothing is recorded, {@code tx} is marked
   * rollback-only, and this returns false: the caller rolls back and processes the events in the usual order, where a
   * duplicate's handler does not run.
   *
   * @param events events with distinct ids, not empty
   * @param results one per event, in order; null keeps nothing
   * @return true when every event was new and is recorded (and committed, if the store committed {@code tx})
   * @throws dev.idem.outbox.InboxHandlerException when the handler switched auto-commit on (its writes are committed
   *     already; a store records the events after them if it can)
   * @throws UnsupportedOperationException when {@link #recordsLast} is false
   */
  default boolean recordLast(StoreTransaction tx, String consumer, List<Entry> events, List<String> results,
      Instant now) {
    throw new UnsupportedOperationException(name() + " records events before the handler runs only");
  }

  /**
   * Whether the store answers now (a JDBC store: a fresh connection that passes {@code isValid}). A store may ask it
   * when it judges a failure ({@link #fault}): the JDBC store takes a lost connection in a handler's causes for an
   * outage only when the database does not answer. Consumers do not ask it: one paused for an outage takes messages
   * again after its pause, and judges the next failure. The default answers yes.
   */
  default boolean available() {
    return true;
  }

  /**
   * Whose failure {@code error} is, as far as this store can tell: {@link Fault#OUTAGE} when the store is away or
   * refuses everyone's work alike (consumers pause and count it against no message), {@link Fault#CONTENTION} for a
   * passing conflict between transactions (a deadlock, a serialization failure, a lock timeout), {@link Fault#OTHER}
   * for anything else (the message's own failure). {@code error} is what processing threw: a
   * {@link StoreException} from the store's own statements or its commit, or a handler's failure
   * wrapped in an {@link dev.idem.outbox.InboxHandlerException}. The default knows only the first: a store
   * exception is an outage, or contention when it is a lock timeout; everything else is {@code OTHER}. The JDBC
   * store also reads the SQL failures in a handler's causes.
   */
  default Fault fault(Throwable error) {
    if (error instanceof StoreException e) {
      return e.isLockTimeout() ? Fault.CONTENTION : Fault.OUTAGE;
    }
    return Fault.OTHER;
  }

  /** The operator side of this store: look-ups and purging, off the hot path. */
  InboxAdmin admin();

  /**
   * An event to record.
   *
   * @param eventId the event's id
   * @param source where it came from, kept for operators; may be null
   * @param digest the payload's digest (64 lowercase hex characters of SHA-256)
   */
  record Entry(String eventId, String source, String digest) {
    public Entry {
      Objects.requireNonNull(eventId, "eventId");
      Objects.requireNonNull(digest, "digest");
    }
  }

  /** Whose failure an error is: see {@link #fault}. */
  enum Fault { OUTAGE, CONTENTION, OTHER }

  /** What {@link #record} found for an event. */
  enum Status { NEW, DUPLICATE, MISMATCH }

  /**
   * The outcome of recording one event.
   *
   * @param status new, duplicate or mismatch
   * @param result the first run's kept result (duplicates only; may be null)
   * @param firstReceivedAt when the event was first recorded
   */
  record Recorded(Status status, String result, Instant firstReceivedAt) {
    public Recorded {
      Objects.requireNonNull(status, "status");
      Objects.requireNonNull(firstReceivedAt, "firstReceivedAt");
    }
  }
}
