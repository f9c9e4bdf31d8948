package dev.idem.outbox.memory;

import dev.idem.core.StoreException;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.OutboxAttempt;
import dev.idem.outbox.OutboxEntry;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxMessage;
import dev.idem.outbox.OutboxPage;
import dev.idem.outbox.OutboxQuery;
import dev.idem.outbox.OutboxStats;
import dev.idem.outbox.OutboxStatus;
import dev.idem.outbox.OutboxSummary;
import dev.idem.outbox.OutboxSummaryPage;
import dev.idem.outbox.spi.ClaimedEvent;
import dev.idem.outbox.spi.FailedDelivery;
import dev.idem.outbox.spi.OutboxAdmin;
import dev.idem.outbox.spi.OutboxStore;
import dev.idem.outbox.spi.PendingEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * An outbox in memory, for tests and examples: the same claims, leases, ordering and history as the JDBC store,
 * nothing kept across restarts. Events enqueued in a transaction appear when it commits. Thread-safe.
 */
public final class InMemoryOutboxStore implements OutboxStore {
  private final StoreLock lock = new StoreLock();
  private final TreeMap<Long, Row> rows = new TreeMap<>();
  private final Map<UUID, Row> byId = new HashMap<>();
  private final Set<UUID> reserved = new HashSet<>();
  private final int historyLimit;
  private final OutboxAdmin admin = new Admin();
  private long nextSeq = 1;

  /** A store that keeps the 20 newest failed attempts of each event. */
  public InMemoryOutboxStore() {
    this(20);
  }

  /** A store that keeps the {@code historyLimit} newest failed attempts of each event. */
  public InMemoryOutboxStore(int historyLimit) {
    if (historyLimit < 1 || historyLimit > 1000) {
      throw new IllegalArgumentException("historyLimit must be 1 to 1000, got " + historyLimit);
    }
    this.historyLimit = historyLimit;
  }

  /** An event as the store holds it. */
  private static final class Row {
    final long seq;
    final OutboxEvent event;
    final boolean ordered;
    final Instant createdAt;
    final List<OutboxAttempt> history = new ArrayList<>();
    OutboxStatus status = OutboxStatus.PENDING;
    int attempts;
    int attemptBase;
    Instant availableAt;
    String leaseOwner;
    Instant leaseUntil;
    String lastError;
    Instant finishedAt;

    Row(long seq, PendingEvent p, Instant now) {
      this.seq = seq;
      this.event = p.event();
      this.ordered = p.ordered();
      this.createdAt = now;
      this.availableAt = p.event().availableAt().filter(t -> t.isAfter(now)).orElse(now);
    }

    ClaimedEvent claimed() {
      return new ClaimedEvent(seq, new OutboxMessage(event.id(), event.type(), event.aggregateType(),
          event.aggregateId(), event.payload(), event.headers(), event.destination(), attempts + 1, createdAt),
          attempts, attemptBase);
    }

    OutboxEntry entry() {
      return new OutboxEntry(seq, event.id(), event.type(), event.aggregateType(), event.aggregateId(), ordered,
          event.payload(), event.headers(), event.destination(), status, attempts, attempts - attemptBase,
          availableAt, leaseOwner, leaseUntil, lastError, createdAt, finishedAt, List.copyOf(history));
    }

    void unlease() {
      leaseOwner = null;
      leaseUntil = null;
    }

    /** Ends the event (delivered or discarded) at {@code now}. */
    void finish(Instant now) {
      finishedAt = now;
      unlease();
    }
  }

  @Override
  public String name() {
    return "in-memory outbox";
  }

  @Override
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    return MemoryTransaction.run(work);
  }

  @Override
  public OutboxAdmin admin() {
    return admin;
  }

  @Override
  public void enqueue(StoreTransaction tx, List<PendingEvent> events, Instant now) {
    MemoryTransaction m = MemoryTransaction.of(tx);
    List<UUID> ids = new ArrayList<>(events.size());
    lock.run(() -> {
      for (PendingEvent p : events) {
        UUID id = p.event().id();
        if (byId.containsKey(id) || reserved.contains(id) || ids.contains(id)) {
          throw new StoreException(name(), "enqueueing event " + id + " failed: an event with that id exists", null,
              false, false, null);
        }
        ids.add(id);
      }
      reserved.addAll(ids);
    });
    m.onCommit(() -> lock.run(() -> {
      for (PendingEvent p : events) {
        Row row = new Row(nextSeq++, p, now);
        rows.put(row.seq, row);
        byId.put(p.event().id(), row);
      }
    }));
    m.onEnd(() -> lock.run(() -> ids.forEach(reserved::remove)));
  }

  @Override
  public List<ClaimedEvent> claim(String token, List<String> routes, Instant now, Instant leaseUntil, int limit) {
    return lock.call(() -> {
      List<Row> due = rows.values().stream()
          .filter(r -> r.status == OutboxStatus.PENDING && !r.availableAt.isAfter(now))
          .filter(r -> routed(r, routes) && headOf(r))
          .sorted(Comparator.comparing((Row r) -> r.availableAt).thenComparingLong(r -> r.seq))
          .limit(limit)
          .toList();
      for (Row r : due) {
        r.leaseOwner = token;
        r.leaseUntil = leaseUntil;
        r.availableAt = leaseUntil;
      }
      return due.stream().sorted(Comparator.comparingLong(r -> r.seq)).map(Row::claimed).toList();
    });
  }

  private static boolean routed(Row r, List<String> routes) {
    String destination = r.event.destination();
    return routes.isEmpty()
        || routes.stream().anyMatch(route -> destination.equals(route) || destination.startsWith(route + ":"));
  }

  /** An unordered event, or an ordered one with no older pending or dead event of its aggregate and destination. */
  private boolean headOf(Row r) {
    return !r.ordered || rows.headMap(r.seq, false).values().stream().noneMatch(p -> p.ordered
        && (p.status == OutboxStatus.PENDING || p.status == OutboxStatus.DEAD)
        && p.event.aggregateType().equals(r.event.aggregateType())
        && p.event.aggregateId().equals(r.event.aggregateId())
        && p.event.destination().equals(r.event.destination()));
  }

  @Override
  public int finish(String token, List<ClaimedEvent> delivered, List<FailedDelivery> failures,
      boolean deleteDelivered, Instant now) {
    return lock.call(() -> {
      int changed = 0;
      for (ClaimedEvent c : delivered) {
        Row r = leased(c, token);
        if (r == null) {
          continue;
        }
        changed++;
        if (deleteDelivered) {
          rows.remove(r.seq);
          byId.remove(r.event.id());
        } else {
          r.status = OutboxStatus.DELIVERED;
          r.finish(now);
          r.attempts++;
          r.lastError = null;
        }
      }
      for (FailedDelivery f : failures) {
        Row r = leased(f.claimed(), token);
        if (r == null) {
          continue;
        }
        changed++;
        r.attempts = f.claimed().attempts() + 1;
        r.status = f.dead() ? OutboxStatus.DEAD : OutboxStatus.PENDING;
        r.availableAt = f.nextAttempt();
        r.lastError = f.error();
        r.unlease();
        r.history.add(new OutboxAttempt(r.attempts, now, f.error(), f.result().responseCode().orElse(null)));
        while (r.history.size() > historyLimit) {
          r.history.remove(0);
        }
      }
      return changed;
    });
  }

  private Row leased(ClaimedEvent c, String token) {
    Row r = rows.get(c.seq());
    return r != null && token.equals(r.leaseOwner) ? r : null;
  }

  @Override
  public int release(String token, Collection<ClaimedEvent> events, Instant now) {
    return lock.call(() -> {
      int changed = 0;
      for (ClaimedEvent c : events) {
        Row r = leased(c, token);
        if (r != null) {
          r.availableAt = now;
          r.unlease();
          changed++;
        }
      }
      return changed;
    });
  }

  /** The row of the event with this id, or null. */
  private Row row(UUID id) {
    return byId.get(Objects.requireNonNull(id, "id"));
  }

  @Override
  public String toString() {
    return "InMemoryOutboxStore";
  }

  private final class Admin implements OutboxAdmin {
    @Override
    public OutboxPage list(OutboxQuery query) {
      Objects.requireNonNull(query, "query");
      return lock.call(() -> {
        List<OutboxEntry> page = new ArrayList<>();
        for (Row r : matching(query)) {
          if (page.size() == query.limit()) {
            return new OutboxPage(List.copyOf(page), OptionalLong.of(page.get(page.size() - 1).seq()));
          }
          page.add(r.entry());
        }
        return new OutboxPage(List.copyOf(page), OptionalLong.empty());
      });
    }

    @Override
    public OutboxSummaryPage summaries(OutboxQuery query) {
      Objects.requireNonNull(query, "query");
      return lock.call(() -> {
        List<OutboxSummary> page = new ArrayList<>();
        for (Row r : matching(query)) {
          if (page.size() == query.limit()) {
            return new OutboxSummaryPage(List.copyOf(page), OptionalLong.of(page.get(page.size() - 1).seq()));
          }
          page.add(OutboxSummary.of(r.entry()));
        }
        return new OutboxSummaryPage(List.copyOf(page), OptionalLong.empty());
      });
    }

    @Override
    public Optional<OutboxEntry> find(UUID id) {
      return lock.call(() -> Optional.ofNullable(row(id)).map(Row::entry));
    }

    @Override
    public boolean replay(UUID id, Instant now) {
      return lock.call(() -> {
        Row r = row(id);
        if (r == null || r.status == OutboxStatus.PENDING) {
          return false;
        }
        replay(r, now);
        return true;
      });
    }

    private void replay(Row r, Instant now) {
      r.status = OutboxStatus.PENDING;
      r.attemptBase = r.attempts;
      r.availableAt = now;
      r.finishedAt = null;
      r.unlease();
    }

    @Override
    public int replayAll(OutboxQuery filter, Instant now) {
      OutboxStatus status = filter.status().orElseThrow(() -> new IllegalArgumentException(
          "a bulk replay needs a status, usually DEAD"));
      if (status == OutboxStatus.PENDING) {
        throw new IllegalArgumentException("pending events are already going to be sent");
      }
      return lock.call(() -> {
        List<Row> matching = matching(filter);
        matching.forEach(r -> replay(r, now));
        return matching.size();
      });
    }

    @Override
    public boolean discard(UUID id, Instant now) {
      return lock.call(() -> {
        Row r = row(id);
        boolean free = r != null && (r.leaseOwner == null || !r.leaseUntil.isAfter(now));
        if (r == null || !(r.status == OutboxStatus.DEAD || r.status == OutboxStatus.PENDING && free)) {
          return false;
        }
        r.status = OutboxStatus.DISCARDED;
        r.finish(now);
        return true;
      });
    }

    @Override
    public int purge(Instant finishedBefore, int limit) {
      if (limit < 1) {
        throw new IllegalArgumentException("limit must be positive, got " + limit);
      }
      return lock.call(() -> {
        List<Row> done = rows.values().stream()
            .filter(r -> (r.status == OutboxStatus.DELIVERED || r.status == OutboxStatus.DISCARDED)
                && !r.finishedAt.isAfter(finishedBefore))
            .limit(limit)
            .toList();
        for (Row r : done) {
          rows.remove(r.seq);
          byId.remove(r.event.id());
        }
        return done.size();
      });
    }

    @Override
    public OutboxStats stats(Set<OutboxStatus> statuses, Instant now) {
      return lock.call(() -> {
        Map<OutboxStatus, Long> counts = new EnumMap<>(OutboxStatus.class);
        statuses.forEach(s -> counts.put(s, 0L));
        Instant oldest = null;
        for (Row r : rows.values()) {
          counts.computeIfPresent(r.status, (s, n) -> n + 1);
          if (r.status == OutboxStatus.PENDING && (oldest == null || r.createdAt.isBefore(oldest))) {
            oldest = r.createdAt;
          }
        }
        Optional<Duration> age = statuses.contains(OutboxStatus.PENDING) && oldest != null
            ? Optional.of(Duration.between(oldest, now).isNegative() ? Duration.ZERO : Duration.between(oldest, now))
            : Optional.empty();
        return new OutboxStats(Map.copyOf(counts), age);
      });
    }
  }

  /** The rows after the query's cursor that match it, in {@code seq} order. */
  private List<Row> matching(OutboxQuery q) {
    return rows.tailMap(q.afterSeq(), false).values().stream()
        .filter(r -> q.status().map(s -> s == r.status).orElse(true)
            && q.type().map(t -> t.equals(r.event.type())).orElse(true)
            && q.destination().map(d -> d.equals(r.event.destination())).orElse(true)
            && q.aggregateType().map(t -> t.equals(r.event.aggregateType())).orElse(true)
            && q.aggregateId().map(t -> t.equals(r.event.aggregateId())).orElse(true))
        .toList();
  }
}
