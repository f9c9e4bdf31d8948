package dev.idem.test;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.StoreException;
import dev.idem.core.spi.IdempotencyAdmin;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Wraps a store and fails chosen calls, to test how code on top of Idem behaves when the store fails. Thread-safe.
 *
 * <pre>{@code
 * FaultInjectingStore store = new FaultInjectingStore(realStore);
 * store.failNext(Call.INSERT, FaultInjectingStore.deadlock());   // the next insert throws a transient failure
 * }</pre>
 */
public final class FaultInjectingStore implements IdempotencyStore {

  /** The store methods a fault can target. */
  public enum Call { FIND, INSERT, UPDATE, DELETE, COMMIT }

  private final IdempotencyStore delegate;
  private final Map<Call, java.util.Deque<Supplier<RuntimeException>>> faults = new ConcurrentHashMap<>();
  private final Map<Call, AtomicInteger> calls = new ConcurrentHashMap<>();

  public FaultInjectingStore(IdempotencyStore delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The next call of this kind throws what the supplier makes. Faults queue up in order. */
  public FaultInjectingStore failNext(Call call, Supplier<RuntimeException> fault) {
    faults.computeIfAbsent(call, c -> new java.util.concurrent.ConcurrentLinkedDeque<>()).add(fault);
    return this;
  }

  /** A transient failure, as a deadlock victim gets. */
  public static Supplier<RuntimeException> deadlock() {
    return () -> new StoreException("faulty", "injected deadlock", "40001", false, true, null);
  }

  /** A lock timeout, as a duplicate waiting behind a long transaction gets. */
  public static Supplier<RuntimeException> lockTimeout() {
    return () -> new StoreException("faulty", "injected lock timeout", "55P03", true, true, null);
  }

  /** A failure that is not worth retrying. */
  public static Supplier<RuntimeException> broken() {
    return () -> new StoreException("faulty", "injected failure", "XX000", false, false, null);
  }

  /** How many calls of this kind reached the wrapper (failed ones included). */
  public int calls(Call call) {
    AtomicInteger n = calls.get(call);
    return n == null ? 0 : n.get();
  }

  private void maybeFail(Call call) {
    calls.computeIfAbsent(call, c -> new AtomicInteger()).incrementAndGet();
    var queue = faults.get(call);
    Supplier<RuntimeException> fault = queue == null ? null : queue.poll();
    if (fault != null) {
      throw fault.get();
    }
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public boolean transactional() {
    return delegate.transactional();
  }

  @Override
  public boolean joinsCallerTransaction() {
    return delegate.joinsCallerTransaction();
  }

  @Override
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    return delegate.inTransaction(tx -> {
      R result = work.execute(tx);
      if (!tx.isRollbackOnly()) {
        maybeFail(Call.COMMIT);
      }
      return result;
    });
  }

  @Override
  public Optional<IdempotencyRecord> find(StoreTransaction tx, RecordKey key) {
    maybeFail(Call.FIND);
    return delegate.find(tx, key);
  }

  @Override
  public Optional<IdempotencyRecord> find(RecordKey key) {
    maybeFail(Call.FIND);
    return delegate.find(key);
  }

  @Override
  public boolean insert(StoreTransaction tx, IdempotencyRecord record) {
    maybeFail(Call.INSERT);
    return delegate.insert(tx, record);
  }

  @Override
  public boolean insertLast(StoreTransaction tx, IdempotencyRecord record) {
    maybeFail(Call.INSERT);
    return delegate.insertLast(tx, record);
  }

  @Override
  public boolean update(StoreTransaction tx, IdempotencyRecord next) {
    maybeFail(Call.UPDATE);
    return delegate.update(tx, next);
  }

  @Override
  public boolean updateLast(StoreTransaction tx, IdempotencyRecord next) {
    maybeFail(Call.UPDATE);
    return delegate.updateLast(tx, next);
  }

  @Override
  public boolean delete(StoreTransaction tx, RecordKey key, long version) {
    maybeFail(Call.DELETE);
    return delegate.delete(tx, key, version);
  }

  @Override
  public boolean deleteIfExpired(StoreTransaction tx, RecordKey key, Instant now) {
    maybeFail(Call.DELETE);
    return delegate.deleteIfExpired(tx, key, now);
  }

  @Override
  public List<IdempotencyRecord> findLeaseExpired(Instant now, Collection<Operation> operations, int limit) {
    maybeFail(Call.FIND);
    return delegate.findLeaseExpired(now, operations, limit);
  }

  @Override
  public int purgeExpired(Instant now, int limit) {
    maybeFail(Call.DELETE);
    return delegate.purgeExpired(now, limit);
  }

  /** The delegate's operator side, unwrapped: no fault targets listing or eviction. */
  @Override
  public IdempotencyAdmin admin() {
    return delegate.admin();
  }
}
