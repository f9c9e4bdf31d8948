package dev.idem.outbox;

import dev.idem.core.fingerprint.JsonCanonicalizer;
import dev.idem.core.fingerprint.MalformedJsonException;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.spi.OutboxStore;
import dev.idem.outbox.spi.PendingEvent;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * The transactional outbox: {@link #enqueue} writes events in the caller's transaction, so an event exists if and
 * only if the business write it describes committed. An {@link OutboxRelay} sends them; the operator methods list,
 * replay and discard them. Where the events live is an {@link OutboxStore}: {@code JdbcOutboxStore} in
 * {@code idem-jdbc}, or {@link dev.idem.outbox.memory.InMemoryOutboxStore} for tests.
 *
 * <pre>{@code
 * Outbox outbox = Outbox.builder(JdbcOutboxStore.builder(dataSource).build())
 *     .orderedTypes(Set.of("account.updated")).build();
 * try (Connection c = dataSource.getConnection()) {
 *   c.setAutoCommit(false);
 *   insertPayment(c, payment);
 *   outbox.enqueue(JdbcTransaction.of(c), OutboxEvent.builder("payment.succeeded").aggregate("payment", payment.id())
 *       .payload(json).destination("webhook:" + endpointId).build());
 *   c.commit();
 * }
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class Outbox {
  private final OutboxStore store;
  private final Set<String> orderedTypes;
  private final Clock clock;
  private final int maxPayloadBytes;
  private final boolean validateJson;

  private Outbox(Builder b) {
    this.store = b.store;
    this.orderedTypes = b.orderedTypes;
    this.clock = b.clock;
    this.maxPayloadBytes = b.maxPayloadBytes;
    this.validateJson = b.validateJson;
  }

  /** A builder of an outbox on {@code store}. */
  public static Builder builder(OutboxStore store) {
    return new Builder(store);
  }

  /** Where the events live. */
  public OutboxStore store() {
    return store;
  }

  /** The clock of the outbox, its relays and operators. */
  public Clock clock() {
    return clock;
  }

  /** Whether events of {@code type} are delivered in order per aggregate. */
  public boolean isOrdered(String type) {
    return orderedTypes.contains(type);
  }

  /**
   * Writes {@code event} in {@code tx}, the caller's open transaction of the store's kind (for JDBC, {@code
   * JdbcTransaction.of(connection)} with auto-commit off); it is sent only if that transaction commits.
   *
   * @return the event id
   * @throws IllegalArgumentException when the payload is too large or not JSON
   * @throws IllegalStateException when {@code tx} is not an open transaction (a JDBC connection in auto-commit mode)
   * @throws dev.idem.core.StoreException when the store refuses the write (an event id written before, say)
   */
  public UUID enqueue(StoreTransaction tx, OutboxEvent event) {
    enqueueAll(tx, List.of(event));
    return event.id();
  }

  /** Writes several events in {@code tx} in one batch; see {@link #enqueue}. */
  public List<UUID> enqueueAll(StoreTransaction tx, List<OutboxEvent> events) {
    Objects.requireNonNull(tx, "tx");
    List<UUID> ids = new ArrayList<>(events.size());
    List<PendingEvent> pending = new ArrayList<>(events.size());
    for (OutboxEvent e : events) {
      checkPayload(Objects.requireNonNull(e, "event"));
      ids.add(e.id());
      pending.add(new PendingEvent(e, orderedTypes.contains(e.type())));
    }
    store.enqueue(tx, pending, clock.instant());
    return ids;
  }

  /**
   * Runs {@code work} in a new transaction of the store and commits it (rolls back if it throws): for writers that
   * do not have a transaction of their own, {@code outbox.inTransaction(tx -> outbox.enqueue(tx, event))}.
   */
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    return store.inTransaction(work);
  }

  private void checkPayload(OutboxEvent e) {
    // a string longer than the limit in chars is longer in bytes too: no need to encode it
    String payload = e.payload();
    if (payload.length() > maxPayloadBytes || payload.getBytes(StandardCharsets.UTF_8).length > maxPayloadBytes) {
      throw new IllegalArgumentException("event " + e.id() + " payload is larger than " + maxPayloadBytes + " bytes");
    }
    if (validateJson) {
      try {
        JsonCanonicalizer.canonicalize(e.payload());
      } catch (MalformedJsonException ex) {
        throw new IllegalArgumentException("event " + e.id() + " payload is not JSON: " + ex.getMessage(), ex);
      }
    }
  }

  // ------------------------------------------------------------------------------------------------- operators

  /** One page of events matching {@code query}, by {@code seq}, each with its attempt history. */
  public OutboxPage list(OutboxQuery query) {
    return store.admin().list(query);
  }

  /** The event with this id, with its attempt history. */
  public Optional<OutboxEntry> find(UUID id) {
    return store.admin().find(id);
  }

  /**
   * Sends a dead, delivered or discarded event again: it is pending now with a fresh set of attempts; its history
   * stays. A dead head of an ordered aggregate unparks it.
   *
   * @return false when no such event exists or it is already pending
   */
  public boolean replay(UUID id) {
    return store.admin().replay(id, clock.instant());
  }

  /**
   * Replays every event matching {@code filter}, which must name a status other than pending (usually
   * {@link OutboxStatus#DEAD}), in batches of {@code filter.limit()} rows per transaction.
   *
   * @return how many events were replayed
   */
  public int replayAll(OutboxQuery filter) {
    return store.admin().replayAll(filter, clock.instant());
  }

  /**
   * Gives up on a dead event, or a pending one that no relay holds: it is not sent again, and a parked ordered
   * aggregate moves on to its next event. Purged with delivered events. An event a relay is sending right now cannot
   * be discarded (it may be arriving): try again when its lease has ended.
   *
   * @return false when no such event exists, it is delivered or discarded already, or a relay holds it
   */
  public boolean discard(UUID id) {
    return store.admin().discard(id, clock.instant());
  }

  /**
   * Deletes up to {@code batchSize} delivered or discarded events finished more than {@code retention} ago, with
   * their history.
   *
   * @return how many were deleted; call again while it returns {@code batchSize}
   */
  public int purge(Duration retention, int batchSize) {
    if (retention.isNegative() || batchSize < 1) {
      throw new IllegalArgumentException("retention must not be negative and batchSize must be positive");
    }
    return store.admin().purge(clock.instant().minus(retention), batchSize);
  }

  /** Purges in batches until nothing older than {@code retention} is left; see {@link #purge}. */
  public long purgeAll(Duration retention, int batchSize) {
    long total = 0;
    int n;
    do {
      n = purge(retention, batchSize);
      total += n;
    } while (n == batchSize);
    return total;
  }

  /** Rows per status and the age of the oldest pending event. */
  public OutboxStats stats() {
    return stats(EnumSet.allOf(OutboxStatus.class));
  }

  /**
   * Rows in the given statuses only, and the age of the oldest pending event when {@code PENDING} is one of them:
   * for meters that watch the backlog, without counting the delivered rows kept for the retention period.
   */
  public OutboxStats stats(Set<OutboxStatus> statuses) {
    return store.admin().stats(statuses, clock.instant());
  }

  @Override
  public String toString() {
    return "Outbox{" + store.name() + ", ordered=" + orderedTypes + '}';
  }

  /** Builds an {@link Outbox}. Mutable and not thread-safe; {@link #build} copies it. */
  public static final class Builder {
    private final OutboxStore store;
    private Set<String> orderedTypes = Set.of();
    private Clock clock = Clock.systemUTC();
    private int maxPayloadBytes = 1 << 20;
    private boolean validateJson = true;

    private Builder(OutboxStore store) {
      this.store = Objects.requireNonNull(store, "store");
    }

    /**
     * Event types delivered in order per aggregate: only the oldest undelivered event of an aggregate is sent, and
     * a dead one parks the aggregate until an operator replays or discards it. Decided when an event is enqueued.
     */
    public Builder orderedTypes(Set<String> types) {
      this.orderedTypes = Set.copyOf(types.stream().map(t -> Limits.text("ordered type", t, Limits.NAME)).toList());
      return this;
    }

    /** The clock of enqueue times, relays and operators (default UTC system clock). */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The largest payload, in UTF-8 bytes (default 1 MiB); a larger one is refused at enqueue. */
    public Builder maxPayloadBytes(int bytes) {
      if (bytes < 1 || bytes > 16 << 20) {
        throw new IllegalArgumentException("maxPayloadBytes must be 1 to 16 MiB, got " + bytes);
      }
      this.maxPayloadBytes = bytes;
      return this;
    }

    /** Whether enqueue checks that the payload is JSON (default true). */
    public Builder validateJson(boolean validate) {
      this.validateJson = validate;
      return this;
    }

    public Outbox build() {
      return new Outbox(this);
    }
  }
}
