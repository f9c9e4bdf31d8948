package dev.idem.core.memory;

import dev.idem.core.AuditEntry;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.spi.IdempotencyAdmin;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A store in the JVM's memory, for tests and single-node services that accept losing records on restart.
 * Thread-safe. It has no transactions: its {@link #inTransaction} only runs the work, so it supports the leased and
 * phased modes (each write is atomic on its own) but not the atomic mode.
 */
public final class InMemoryIdempotencyStore implements IdempotencyStore {
  private static final Comparator<RecordKey> ORDER = Comparator.comparing((RecordKey k) -> k.scope().value())
      .thenComparing(k -> k.operation().name())
      .thenComparing(k -> k.key().value());

  private final String name;
  private final ConcurrentSkipListMap<RecordKey, IdempotencyRecord> records = new ConcurrentSkipListMap<>(ORDER);
  private final IdempotencyAdmin admin = new Admin();
  private final ConcurrentHashMap<RecordKey, List<AuditEntry>> audit = new ConcurrentHashMap<>();

  public InMemoryIdempotencyStore(String name) {
    this.name = Objects.requireNonNull(name, "name");
  }

  public InMemoryIdempotencyStore() {
    this("memory");
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public boolean transactional() {
    return false;
  }

  @Override
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    return work.execute(new NoTransaction());
  }

  @Override
  public Optional<IdempotencyRecord> find(StoreTransaction tx, RecordKey key) {
    return Optional.ofNullable(records.get(key));
  }

  @Override
  public Optional<IdempotencyRecord> find(RecordKey key) {
    return Optional.ofNullable(records.get(key));
  }

  @Override
  public boolean insert(StoreTransaction tx, IdempotencyRecord record) {
    return records.putIfAbsent(record.key(), record) == null;
  }

  @Override
  public boolean update(StoreTransaction tx, IdempotencyRecord next) {
    long expected = next.version() - 1;
    // A compare-and-replace on the exact current value: ConcurrentSkipListMap's compute methods may run their
    // function more than once under contention, so a flag set inside one cannot tell which attempt won.
    while (true) {
      IdempotencyRecord current = records.get(next.key());
      if (current == null || current.version() != expected) {
        return false;
      }
      if (records.replace(next.key(), current, next)) {
        return true;
      }
    }
  }

  @Override
  public boolean delete(StoreTransaction tx, RecordKey key, long version) {
    IdempotencyRecord current = records.get(key);
    return current != null && current.version() == version && records.remove(key, current);
  }

  @Override
  public boolean deleteIfExpired(StoreTransaction tx, RecordKey key, Instant now) {
    IdempotencyRecord current = records.get(key);
    return current != null && current.isGone(now) && records.remove(key, current);
  }

  @Override
  public List<IdempotencyRecord> findLeaseExpired(Instant now, Collection<Operation> operations, int limit) {
    List<IdempotencyRecord> found = new ArrayList<>();
    for (IdempotencyRecord r : records.values()) {
      if (r.isLeaseExpired(now) && operations.contains(r.key().operation())) {
        found.add(r);
      }
    }
    found.sort(Comparator.comparing(IdempotencyRecord::lockedUntil, Comparator.nullsFirst(Comparator.naturalOrder())));
    return found.size() > limit ? List.copyOf(found.subList(0, limit)) : found;
  }

  @Override
  public int purgeExpired(Instant now, int limit) {
    int purged = 0;
    for (IdempotencyRecord r : records.values()) {
      if (purged >= limit) {
        break;
      }
      if (r.isGone(now)) {
        purged += records.remove(r.key(), r) ? 1 : 0;
      } else if (r.isRetained(now)) {
        IdempotencyRecord tombstone = r.tombstone(now);
        if (!sameContent(r, tombstone)) {
          purged += records.replace(r.key(), r, tombstone) ? 1 : 0;
        }
      }
    }
    return purged;
  }

  /** Whether a record already is its tombstone (but for version and update time): nothing left to drop. */
  private static boolean sameContent(IdempotencyRecord r, IdempotencyRecord tombstone) {
    return r.response().equals(tombstone.response()) && r.fingerprint().equals(tombstone.fingerprint())
        && r.checkpoint().equals(tombstone.checkpoint()) && r.recoveryPoint() == null && r.keyNonce() == null;
  }

  @Override
  public IdempotencyAdmin admin() {
    return admin;
  }

  /** How many records are held, whatever their state or expiry. */
  public int size() {
    return records.size();
  }

  /** The operator side, on the same map. */
  private final class Admin implements IdempotencyAdmin {

    @Override
    public List<IdempotencyRecord> list(RecordState state, RecordKey after, int limit) {
      List<IdempotencyRecord> page = new ArrayList<>();
      var view = after == null ? records : records.tailMap(after, false);
      for (IdempotencyRecord r : view.values()) {
        if (page.size() >= limit) {
          break;
        }
        if (r.state() == state) {
          page.add(r);
        }
      }
      return page;
    }

    @Override
    public boolean evict(RecordKey key) {
      return records.remove(key) != null;
    }

    @Override
    public Optional<AuditEntry> resolve(RecordKey key, long version, Resolution resolution) {
      IdempotencyRecord current = records.get(key);
      if (current == null || current.version() != version || current.state() != RecordState.UNCERTAIN) {
        return Optional.empty();
      }
      IdempotencyRecord next = current.resolve(resolution);
      AuditEntry entry = AuditEntry.of(current, next, resolution);
      // The record changes first (compare-and-replace on the exact value read), then its entry is appended: only
      // the winner of a race writes one.
      List<AuditEntry> entries = audit.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>());
      if (!records.replace(key, current, next)) {
        return Optional.empty();
      }
      entries.add(entry);
      return Optional.of(entry);
    }

    @Override
    public List<AuditEntry> history(RecordKey key) {
      return List.copyOf(audit.getOrDefault(key, List.of()));
    }

    @Override
    public String toString() {
      return "admin of in-memory store '" + name + "'";
    }
  }

  private static final class NoTransaction implements StoreTransaction {
    private boolean rollbackOnly;

    @Override
    public <T> T unwrap(Class<T> type) {
      throw new IllegalArgumentException("the in-memory store's transactions hold no " + type.getName());
    }

    @Override
    public void setRollbackOnly() {
      rollbackOnly = true;
    }

    @Override
    public boolean isRollbackOnly() {
      return rollbackOnly;
    }
  }
}
