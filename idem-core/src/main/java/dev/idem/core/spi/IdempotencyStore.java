package dev.idem.core.spi;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Where records live. Implementations must make {@link #insert} the arbiter of a race: of two concurrent inserts of
 * the same {@link RecordKey}, exactly one succeeds, and the other returns {@code false} once the first has
 * committed (or succeeds if the first rolled back). No method may decide a race by reading first.
 *
 * <p>Every method that takes a {@link StoreTransaction} runs inside it; the others run in their own short
 * transaction. Implementations are thread-safe. The contract test kit in {@code idem-test}
 * ({@code IdempotencyStoreContract}) pins all of this down; every implementation must pass it.
 */
public interface IdempotencyStore {

  /** The store's name, used in log lines, meter tags and exception messages. */
  String name();

  /**
   * Whether the store has transactions that can hold the caller's own writes, which atomic mode needs. The
   * in-memory store does not.
   */
  boolean transactional();

  /**
   * Whether a store transaction begun on this thread now would join a transaction the caller has open, and commit
   * only when the caller commits, instead of committing on its own (a JDBC store bound to a connection whose
   * auto-commit is off). Phased and leased executions need commits of their own, so they refuse to start then. The
   * default is {@code false}: a store that never joins a caller's transaction.
   */
  default boolean joinsCallerTransaction() {
    return false;
  }

  /**
   * Runs the work in a new transaction and commits it, unless the work throws or marked the transaction
   * rollback-only, in which case the transaction rolls back. Exceptions from the work propagate unchanged
   * (checked ones wrapped in {@link dev.idem.core.StoreException} only when they are the store's own).
   */
  <R> R inTransaction(TransactionWork<R> work) throws Exception;

  /**
   * The record, whatever its expiry (callers judge expiry with their clock). Called first in a transaction, before
   * any write, it may run outside the transaction proper (a JDBC store reads in auto-commit mode and begins the
   * transaction only at the first write), so that a replay costs one read.
   */
  Optional<IdempotencyRecord> find(StoreTransaction tx, RecordKey key);

  /**
   * The committed record, read outside any transaction (one auto-commit read), whatever its expiry. The replay
   * path: it costs one round trip and holds nothing.
   */
  Optional<IdempotencyRecord> find(RecordKey key);

  /**
   * Inserts a new record. Returns {@code false} when a record with that key exists (including one committed by a
   * concurrent transaction this call waited for). After {@code false} the transaction may only roll back.
   *
   * @throws dev.idem.core.StoreException on any other failure, including a lock timeout (see
   *     {@link dev.idem.core.StoreException#isLockTimeout()})
   */
  boolean insert(StoreTransaction tx, IdempotencyRecord record);

  /**
   * Inserts a record as the last write of a transaction this store began: a store may commit the
   * transaction in the same round trip (PostgreSQL does). Same results as {@link #insert}; after {@code true} the
   * transaction takes no more writes. The default is {@link #insert}.
   */
  default boolean insertLast(StoreTransaction tx, IdempotencyRecord record) {
    return insert(tx, record);
  }

  /**
   * Replaces the record's mutable columns with {@code next}'s, if and only if the stored version is
   * {@code next.version() - 1}. Returns {@code false} otherwise: another writer got there first (fencing). The mutable
   * columns are all but the key, the fingerprint's overall hash and the times set at the first write (creation,
   * expiry, retention, nonce): the state, the answer, the fingerprint's field hashes (sealed or opened by a decorator),
   * the recovery point and checkpoint, the lease, the version, the update time and the resume count.
   */
  boolean update(StoreTransaction tx, IdempotencyRecord next);

  /**
   * Updates a record as the last write of a transaction this store began: a store may commit the transaction in the
   * same round trip (PostgreSQL does), but only when the update applied. Same results as {@link #update}; after
   * {@code true} the transaction takes no more writes, after {@code false} it may only roll back. The default is
   * {@link #update}.
   */
  default boolean updateLast(StoreTransaction tx, IdempotencyRecord next) {
    return update(tx, next);
  }

  /** Deletes the record if its stored version is {@code version}. */
  boolean delete(StoreTransaction tx, RecordKey key, long version);

  /**
   * Deletes the record if its key is free at {@code now}: it expired at or before {@code now}, is not in progress
   * with a recovery point or under a lease that ends after {@code now}, is not uncertain, and is not a final record
   * inside its retention (see {@link IdempotencyRecord#isGone});
   * returns whether it did. A tombstone is never deleted here, whatever the caller read.
   */
  boolean deleteIfExpired(StoreTransaction tx, RecordKey key, Instant now);

  /**
   * Up to {@code limit} in-progress records of the given operations whose lease ended at or before {@code now},
   * whatever their expiry, oldest lease first. A snapshot: takeover is decided by {@link #update}'s version check.
   * Only the given operations: a completer must never see records of operations it cannot resume (another
   * service sharing the table, say).
   */
  List<IdempotencyRecord> findLeaseExpired(Instant now, Collection<Operation> operations, int limit);

  /**
   * Up to {@code limit} {@link RecordState#UNCERTAIN uncertain} records of the given operations, ordered
   * by key, starting after {@code after} (exclusive; {@code null} for the first page): what the completer's
   * reconciliation rounds decide. A snapshot: each decision is a version-checked write. The default pages through
   * {@link IdempotencyAdmin#list} and keeps the given operations.
   */
  default List<IdempotencyRecord> findUncertain(Collection<Operation> operations, RecordKey after, int limit) {
    List<IdempotencyRecord> found = new ArrayList<>();
    RecordKey cursor = after;
    while (found.size() < limit) {
      List<IdempotencyRecord> page = admin().list(RecordState.UNCERTAIN, cursor, limit);
      for (IdempotencyRecord r : page) {
        if (found.size() < limit && operations.contains(r.key().operation())) {
          found.add(r);
        }
      }
      if (page.size() < limit) {
        break;
      }
      cursor = page.get(page.size() - 1).key();
    }
    return found;
  }

  /**
   * Purges up to {@code limit} records at {@code now}, in one short transaction that does not block claims of live
   * keys: records whose key is free ({@link IdempotencyRecord#isGone}) are deleted, and final records past their
   * expiry but inside their retention become their {@linkplain IdempotencyRecord#tombstone tombstone}, once (the
   * response body and headers, field hashes, checkpoint and key nonce go; the row shrinks). In-progress records with
   * a recovery point are left alone (they wait for their completion), and so are in-progress records whose lease
   * ends after {@code now} (their holder may still be running the work) and uncertain records (they wait for a
   * decision). Returns how many records it deleted or turned
   * into tombstones; callers loop until it returns less than the limit.
   */
  int purgeExpired(Instant now, int limit);

  /**
   * The store's operator side: listing and eviction, off the hot path. Every store must provide one, on the same
   * records as the store; calling this method does no I/O.
   */
  IdempotencyAdmin admin();
}
