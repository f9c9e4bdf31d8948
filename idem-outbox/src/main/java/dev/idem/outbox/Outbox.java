package dev.idem.outbox;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.fingerprint.JsonCanonicalizer;
import dev.idem.core.fingerprint.MalformedJsonException;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.spi.AfterCommit;
import dev.idem.outbox.spi.OutboxStore;
import dev.idem.outbox.spi.PendingEvent;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumSet;
import java.util.HashSet;
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
 * <p><b>Encrypted routes.</b> With {@link Builder#encryption(Encryption, Set)} (or {@link Builder#encryptAll}), the
 * payload of an event bound for one of the given routes is sealed at enqueue ({@link Encryption#sealText}, associated
 * data binding the event id and destination) and stored as that text: the store never sees the plaintext. A relay
 * opens it just before handing the message to the transport; {@link #list} and {@link #find} show it opened to the
 * operator. A payload that does not open (tampered with, moved to another event, or sealed under a key the key
 * provider does not hold) is never sent: the relay marks the event dead at once with an error naming the reason, and
 * tells {@link OutboxListener#decryptionFailed}. Headers, type, aggregate and destination stay in clear text.
 *
 * <p><b>Wake-up after commit.</b> A relay built on this outbox object ({@link OutboxRelay#builder(Outbox)}) and
 * started is woken as soon as a transaction that enqueued events for one of its routes commits, instead of at its
 * next poll (unless it was built with {@link OutboxRelay.Builder#wakeOnCommit wakeOnCommit(false)}). The outbox sees
 * the commits of the transactions it runs ({@link #inTransaction}); for the caller's own transactions it asks its
 * {@link AfterCommit} hook ({@link Builder#afterCommit}; the Spring Boot starter plugs in Spring's transaction
 * synchronization), and without one the events wait for the poll, or for {@link #wakeRelays} called after the commit.
 *
 * <p>Thread-safe; its settings are fixed when it is built.
 */
public final class Outbox {
  /**
   * The largest plaintext payload of an outbox that seals payloads: 12 MiB minus 64 KiB, so that the sealed text
   * (base64, a third longer, plus the envelope) fits MariaDB's {@code MEDIUMTEXT} column of 16 MiB.
   */
  public static final int MAX_SEALED_PAYLOAD_BYTES = (12 << 20) - (64 << 10);
  /** The longest payload text a store column holds (MariaDB's {@code MEDIUMTEXT}). */
  static final int MAX_STORED_PAYLOAD_CHARS = (16 << 20) - 1;
  private static final String ASSOCIATED_DATA = "idem.outbox.payload.v1\n";

  private final OutboxStore store;
  private final Set<String> orderedTypes;
  private final Clock clock;
  private final int maxPayloadBytes;
  private final boolean validateJson;
  private final Encryption encryption;
  private final Set<String> sealedRoutes;
  private final boolean sealAll;
  private final AfterCommit afterCommit;
  private final CommitWakeups wakeups = new CommitWakeups();

  private Outbox(Builder b) {
    this.store = b.store;
    this.orderedTypes = b.orderedTypes;
    this.clock = b.clock;
    this.maxPayloadBytes = b.maxPayloadBytes;
    this.validateJson = b.validateJson;
    this.encryption = b.encryption;
    this.sealedRoutes = b.sealedRoutes;
    this.sealAll = b.sealAll;
    this.afterCommit = b.afterCommit;
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
   * Whether the payloads of events bound for {@code destination} are sealed at enqueue: its route (the part before
   * {@code ':'}) or the whole destination is one of the encrypted routes, or every route is.
   */
  public boolean seals(String destination) {
    return encryption != null
        && (sealAll || sealedRoutes.contains(destination) || sealedRoutes.contains(Limits.route(destination)));
  }

  /**
   * Writes {@code event} in {@code tx}, the caller's open transaction of the store's kind (for JDBC, {@code
   * JdbcTransaction.of(connection)} with auto-commit off); it is sent only if that transaction commits.
   *
   * @return the event id
   * @throws IllegalArgumentException when the payload is too large or not JSON, or is already a sealed envelope
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
      pending.add(new PendingEvent(seals(e.destination()) ? sealed(e) : e, orderedTypes.contains(e.type())));
    }
    store.enqueue(tx, pending, clock.instant());
    if (!wakeups.isEmpty() && !events.isEmpty()) {
      Set<String> routes = new HashSet<>(2);
      for (OutboxEvent e : events) {
        routes.add(Limits.route(e.destination()));
      }
      Runnable wake = () -> wakeups.wake(routes);
      if (!CommitWakeups.afterCommit(tx, wake)) {
        afterCommit.register(tx, wake);
      }
    }
    return ids;
  }

  /**
   * Runs {@code work} in a new transaction of the store and commits it (rolls back if it throws): for writers that
   * do not have a transaction of their own, {@code outbox.inTransaction(tx -> outbox.enqueue(tx, event))}. Once it
   * has committed, the relays of the events it enqueued are woken (see the class comment).
   */
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    CommitWakeups.Scope scope = new CommitWakeups.Scope();
    R result = store.inTransaction(tx -> scope.run(tx, work));
    scope.ended();
    return result;
  }

  /**
   * Wakes the started relays built on this outbox object that serve any of {@code routes} (the part of a destination
   * before {@code ':'}) and wake on commit: for a caller that enqueued in a transaction of its own, which the outbox
   * cannot see commit, and has no {@link AfterCommit} hook. Cheap: a relay that has a wake-up on its way already is
   * not signalled again.
   */
  public void wakeRelays(Collection<String> routes) {
    wakeups.wake(Set.copyOf(routes));
  }

  /** The relays woken after commits; a relay adds itself when it starts and removes itself when it closes. */
  CommitWakeups wakeups() {
    return wakeups;
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
    if (Encryption.isSealed(payload)) {
      // a relay would open it as if this outbox had sealed it: refuse sealed text copied from elsewhere
      throw new IllegalArgumentException("event " + e.id() + " payload is a sealed envelope ('"
          + Encryption.TEXT_PREFIX + "...'); enqueue the plaintext and let the outbox seal it");
    }
  }

  private OutboxEvent sealed(OutboxEvent e) {
    String sealed = encryption.sealText(e.payload(), associatedData(e.id(), e.destination()));
    if (sealed.length() > MAX_STORED_PAYLOAD_CHARS) {
      throw new IllegalArgumentException("event " + e.id() + " payload sealed is " + sealed.length()
          + " characters, more than the payload column holds (" + MAX_STORED_PAYLOAD_CHARS + "): send a smaller"
          + " payload");
    }
    return e.withPayload(sealed);
  }

  /**
   * The payload as the transport must send it: opened when it is sealed, as it is otherwise.
   *
   * @throws DecryptionException when it is sealed and does not open (or this outbox has no encryption)
   */
  String open(UUID id, String destination, String payload) {
    if (!Encryption.isSealed(payload)) {
      return payload;
    }
    if (encryption == null) {
      throw new DecryptionException(DecryptionException.Reason.UNKNOWN_KEY, keyIdOrNull(payload), "event " + id
          + " payload is sealed, and outbox on " + store.name() + " has no encryption to open it: configure"
          + " Outbox.Builder.encryption(...) with the key provider that sealed it");
    }
    return encryption.openText(payload, associatedData(id, destination));
  }

  private static String keyIdOrNull(String payload) {
    try {
      return Encryption.keyIdOf(payload);
    } catch (DecryptionException e) {
      return null;
    }
  }

  private static String associatedData(UUID id, String destination) {
    return ASSOCIATED_DATA + id + '\n' + destination;
  }

  /** The entry with its payload opened for the operator; as stored (sealed text) when it does not open. */
  private OutboxEntry opened(OutboxEntry e) {
    if (!Encryption.isSealed(e.payload())) {
      return e;
    }
    String payload;
    try {
      payload = open(e.id(), e.destination(), e.payload());
    } catch (RuntimeException ex) {
      return e; // shown sealed (OutboxEntry.payloadSealed()); the relay reports why when it tries to send it
    }
    return new OutboxEntry(e.seq(), e.id(), e.type(), e.aggregateType(), e.aggregateId(), e.ordered(), payload,
        e.headers(), e.destination(), e.status(), e.attempts(), e.attemptsSinceReplay(), e.availableAt(),
        e.leaseOwner(), e.leaseUntil(), e.lastError(), e.createdAt(), e.finishedAt(), e.history());
  }

  // ------------------------------------------------------------------------------------------------- operators

  /**
   * One page of events matching {@code query}, by {@code seq}, each with its payload and attempt history. Sealed
   * payloads are shown opened; one that does not open is shown as its sealed text
   * ({@link OutboxEntry#payloadSealed()}). Every payload of the page is read: to show events without them, list
   * {@link #summaries}.
   */
  public OutboxPage list(OutboxQuery query) {
    OutboxPage page = store.admin().list(query);
    if (encryption == null) {
      return page;
    }
    return new OutboxPage(page.entries().stream().map(this::opened).toList(), page.nextCursor());
  }

  /**
   * One page of events matching {@code query}, by {@code seq}, each with its attempt history but without its payload
   * and headers, which the store leaves in the database: what a list of events for an operator needs, however large
   * the payloads. {@link OutboxSummary#payloadBytes} is the size as stored, that of the sealed text for a sealed
   * payload; {@link #find} reads one event whole.
   */
  public OutboxSummaryPage summaries(OutboxQuery query) {
    return store.admin().summaries(Objects.requireNonNull(query, "query"));
  }

  /** The event with this id, with its attempt history; its payload shown as {@link #list} shows it. */
  public Optional<OutboxEntry> find(UUID id) {
    Optional<OutboxEntry> found = store.admin().find(id);
    return encryption == null ? found : found.map(this::opened);
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
    return "Outbox{" + store.name() + ", ordered=" + orderedTypes
        + (encryption == null ? "" : ", sealed=" + (sealAll ? "*" : sealedRoutes)) + '}';
  }

  /** Builds an {@link Outbox}. Mutable and not thread-safe; {@link #build} copies it. */
  public static final class Builder {
    private final OutboxStore store;
    private Set<String> orderedTypes = Set.of();
    private Clock clock = Clock.systemUTC();
    private int maxPayloadBytes = 1 << 20;
    private boolean validateJson = true;
    private Encryption encryption;
    private Set<String> sealedRoutes = Set.of();
    private boolean sealAll;
    private AfterCommit afterCommit = AfterCommit.NONE;

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

    /**
     * Seals the payloads of events bound for {@code routes} with {@code encryption} (see the class comment). An entry
     * is a route ({@code webhook}: every {@code webhook:...} destination) or a whole destination
     * ({@code webhook:we_123}). Events already in the outbox, sealed or not, are read either way, so a route can be
     * added or removed at any time; with an empty set nothing new is sealed but sealed events still open. The
     * largest payload is then at most {@link #MAX_SEALED_PAYLOAD_BYTES}.
     */
    public Builder encryption(Encryption encryption, Set<String> routes) {
      this.encryption = Objects.requireNonNull(encryption, "encryption");
      this.sealedRoutes = Set.copyOf(routes.stream().map(Limits::destination).toList());
      this.sealAll = false;
      return this;
    }

    /** Seals the payloads of every event with {@code encryption}; see {@link #encryption(Encryption, Set)}. */
    public Builder encryptAll(Encryption encryption) {
      this.encryption = Objects.requireNonNull(encryption, "encryption");
      this.sealedRoutes = Set.of();
      this.sealAll = true;
      return this;
    }

    /**
     * How the outbox learns that a transaction it did not run itself (the caller's) has committed, to wake the relays
     * of the events enqueued in it; see the class comment. Default {@link AfterCommit#NONE}: such events wait for the
     * relay's poll.
     */
    public Builder afterCommit(AfterCommit hook) {
      this.afterCommit = Objects.requireNonNull(hook, "afterCommit");
      return this;
    }

    /**
     * Builds the outbox.
     *
     * @throws IllegalArgumentException when payloads are sealed and {@link #maxPayloadBytes} is larger than
     *     {@link #MAX_SEALED_PAYLOAD_BYTES}
     */
    public Outbox build() {
      if (encryption != null && maxPayloadBytes > MAX_SEALED_PAYLOAD_BYTES) {
        throw new IllegalArgumentException("maxPayloadBytes must be at most " + MAX_SEALED_PAYLOAD_BYTES
            + " (12 MiB - 64 KiB) when payloads are sealed: the sealed text is a third longer and must fit the"
            + " payload column (16 MiB on MariaDB); got " + maxPayloadBytes);
      }
      return new Outbox(this);
    }
  }
}
