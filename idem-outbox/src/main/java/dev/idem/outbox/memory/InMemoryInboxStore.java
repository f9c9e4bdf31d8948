package dev.idem.outbox.memory;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.spi.InboxAdmin;
import dev.idem.outbox.spi.InboxStore;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Condition;

/**
 * An inbox in memory, for tests and examples. A record written in a transaction is held for it until it ends:
 * another transaction recording the same event waits, then finds it (committed) or records the event itself (rolled
 * back), as a database's key lock would make it. Batches take their events in one global order, so overlapping
 * batches do not deadlock. Thread-safe.
 */
public final class InMemoryInboxStore implements InboxStore {
  private final StoreLock lock = new StoreLock();
  private final Condition released = lock.newCondition();
  private final Map<Key, Row> committed = new HashMap<>();
  private final Map<Key, Held> held = new HashMap<>();
  private final InboxAdmin admin = new Admin();

  private record Key(String consumer, String eventId) {}

  private record Row(String digest, String result, Instant receivedAt) {}

  /** A record a transaction wrote and has not ended. */
  private static final class Held {
    final MemoryTransaction owner;
    final String digest;
    final Instant receivedAt;
    String result;

    Held(MemoryTransaction owner, String digest, Instant receivedAt) {
      this.owner = owner;
      this.digest = digest;
      this.receivedAt = receivedAt;
    }
  }

  @Override
  public String name() {
    return "in-memory inbox";
  }

  @Override
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    return MemoryTransaction.run(work);
  }

  @Override
  public InboxAdmin admin() {
    return admin;
  }

  @Override
  public List<Recorded> record(StoreTransaction tx, String consumer, List<Entry> events, Instant now) {
    MemoryTransaction m = MemoryTransaction.of(tx);
    Map<String, Recorded> outcome = new HashMap<>();
    lock.run(() -> {
      for (Entry e : events.stream().sorted(Comparator.comparing(Entry::eventId)).toList()) {
        Key key = new Key(consumer, e.eventId());
        Held h = heldAfterOthers(key, m);
        Row row = committed.get(key);
        if (h != null) {
          outcome.put(e.eventId(), found(e, h.digest, h.result, h.receivedAt));
        } else if (row != null) {
          outcome.put(e.eventId(), found(e, row.digest(), row.result(), row.receivedAt()));
        } else {
          hold(key, m, e.digest(), now, null);
          outcome.put(e.eventId(), new Recorded(Status.NEW, null, now));
        }
      }
    });
    return events.stream().map(e -> outcome.get(e.eventId())).toList();
  }

  /** Yes: a transaction here cannot be broken by its handler. */
  @Override
  public boolean recordsLast() {
    return true;
  }

  @Override
  public boolean recordLast(StoreTransaction tx, String consumer, List<Entry> events, List<String> results,
      Instant now) {
    MemoryTransaction m = MemoryTransaction.of(tx);
    if (events.isEmpty()) {
      throw new IllegalArgumentException("events must not be empty");
    }
    if (results.size() != events.size()) {
      throw new IllegalArgumentException(results.size() + " results for " + events.size() + " events");
    }
    Map<String, String> resultById = new HashMap<>();
    for (int i = 0; i < events.size(); i++) {
      resultById.put(events.get(i).eventId(), results.get(i));
    }
    boolean recorded = lock.call(() -> {
      for (Entry e : events.stream().sorted(Comparator.comparing(Entry::eventId)).toList()) {
        Key key = new Key(consumer, e.eventId());
        Held h = heldAfterOthers(key, m);
        if (h != null || committed.containsKey(key)) {
          return false; // the records this call holds already go when the transaction rolls back
        }
        hold(key, m, e.digest(), now, resultById.get(e.eventId()));
      }
      return true;
    });
    if (!recorded) {
      tx.setRollbackOnly();
    }
    return recorded;
  }

  /** Under the lock: a new record of {@code key} that {@code m} holds until it ends, committed if it commits. */
  private void hold(Key key, MemoryTransaction m, String digest, Instant receivedAt, String result) {
    Held mine = new Held(m, digest, receivedAt);
    mine.result = result;
    held.put(key, mine);
    m.onCommit(() -> commit(key, mine));
    m.onEnd(() -> release(key, mine));
  }

  /**
   * Under the lock: waits until no other transaction holds {@code key}, as a database's key lock would make it;
   * returns what {@code m} holds of it, or null.
   */
  private Held heldAfterOthers(Key key, MemoryTransaction m) {
    Held h = held.get(key);
    while (h != null && h.owner != m) {
      released.awaitUninterruptibly();
      h = held.get(key);
    }
    return h;
  }

  private static Recorded found(Entry e, String digest, String result, Instant receivedAt) {
    return new Recorded(digest.equals(e.digest()) ? Status.DUPLICATE : Status.MISMATCH, result, receivedAt);
  }

  @Override
  public void keep(StoreTransaction tx, String consumer, List<String> eventIds, List<String> results) {
    MemoryTransaction m = MemoryTransaction.of(tx);
    lock.run(() -> {
      for (int i = 0; i < eventIds.size(); i++) {
        Held h = held.get(new Key(consumer, eventIds.get(i)));
        if (h == null || h.owner != m) {
          throw new InboxHandlerException(consumer, eventIds.get(i), new IllegalStateException("the inbox record is"
              + " not part of this transaction: record the event in the transaction that keeps its result"));
        }
        h.result = results.get(i);
      }
    });
  }

  private void commit(Key key, Held h) {
    lock.run(() -> committed.put(key, new Row(h.digest, h.result, h.receivedAt)));
  }

  private void release(Key key, Held h) {
    lock.run(() -> {
      held.remove(key, h);
      released.signalAll();
    });
  }

  @Override
  public String toString() {
    return "InMemoryInboxStore";
  }

  private final class Admin implements InboxAdmin {
    @Override
    public boolean contains(String consumer, String eventId) {
      return lock.call(() -> committed.containsKey(new Key(consumer, eventId)));
    }

    @Override
    public int purge(Instant receivedBefore, int limit) {
      if (limit < 1) {
        throw new IllegalArgumentException("limit must be positive, got " + limit);
      }
      return lock.call(() -> {
        List<Key> old = committed.entrySet().stream()
            .filter(e -> !e.getValue().receivedAt().isAfter(receivedBefore))
            .limit(limit)
            .map(Map.Entry::getKey)
            .toList();
        old.forEach(committed::remove);
        return old.size();
      });
    }
  }
}
