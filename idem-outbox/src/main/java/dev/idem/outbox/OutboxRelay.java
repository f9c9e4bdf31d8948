package dev.idem.outbox;

import dev.idem.core.crypto.DecryptionException;
import dev.idem.outbox.spi.ClaimedEvent;
import dev.idem.outbox.spi.FailedDelivery;
import dev.idem.outbox.spi.OutboxStore;
import dev.idem.retry.Backoff;
import dev.idem.retry.Jitter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Sends outbox events: each worker claims a batch of due events under a lease, sends them through the transport of
 * their destination's route outside any transaction or row lock, then marks them delivered (or deletes them) in one
 * statement. Failures are retried with capped exponential backoff and jitter; after a route's maximum attempts, or at
 * once for a {@link DeliveryResult.Kind#PERMANENT} failure, an event is dead.
 *
 * <p>Any number of relays, in one JVM or many, may run on one outbox: claims skip locked rows, and a claimed row is
 * out of every other relay's range until its lease ends. A relay that dies mid-batch leaves its rows to be taken over
 * when the lease ends; they are sent again (at least once), so receivers deduplicate on the event id.
 *
 * <p>A sealed payload (an encrypted route, see {@link Outbox}) is opened just before it is sent; one that does not
 * open is dead at once, never sent, with an error naming the reason ({@code TAMPERED}, {@code UNKNOWN_KEY},
 * {@code MALFORMED}), and {@link OutboxListener#decryptionFailed} counts it. A key provider that cannot be reached
 * (any other exception) fails the attempt, retried with backoff.
 *
 * <p>An idle worker looks for due events every {@link Builder#pollInterval poll interval}; a started relay is also
 * woken as soon as a transaction that enqueued events for one of its routes commits (see {@link Outbox}), unless it
 * was built with {@link Builder#wakeOnCommit wakeOnCommit(false)}. Wake-ups coalesce: however many commits arrive
 * while a worker is busy, it runs one more cycle when it is done, and only a worker that is waiting is signalled.
 *
 * <pre>{@code
 * OutboxRelay relay = OutboxRelay.builder(outbox)
 *     .route("webhook", webhookTransport)
 *     .route("rabbitmq", rabbitTransport, 10)
 *     .threads(2).batchSize(100)
 *     .build();
 * relay.start();
 * ...
 * relay.close();
 * }</pre>
 */
public final class OutboxRelay implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(OutboxRelay.class.getName());

  private final Outbox outbox;
  private final OutboxStore store;
  private final String name;
  private final Map<String, Route> routes;
  private final List<String> routeNames;
  private final int threads;
  private final int batchSize;
  private final Duration lease;
  private final Duration pollInterval;
  private final Backoff backoff;
  private final Duration maxRetryAfter;
  private final boolean deleteDelivered;
  private final OutboxListener listener;
  private final boolean wakeOnCommit;
  /** A wake-up came since a worker last began a claim: the next idle worker looks again before it waits. */
  private final AtomicBoolean wakePending = new AtomicBoolean();
  private final AtomicBoolean started = new AtomicBoolean();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition wake = lock.newCondition();
  private volatile boolean running;
  private final List<Thread> workers = new ArrayList<>();
  /** Workers whose loop has not ended: an error of the JVM's own ends one (see {@link #fatal}). */
  private final AtomicInteger liveWorkers = new AtomicInteger();

  private record Route(OutboxTransport transport, int maxAttempts) {}

  private OutboxRelay(Builder b) {
    this.outbox = b.outbox;
    this.store = b.outbox.store();
    this.name = b.name;
    Map<String, Route> resolved = new LinkedHashMap<>();
    b.routes.forEach((k, r) -> resolved.put(k, r.maxAttempts() == -1 ? new Route(r.transport(), b.maxAttempts) : r));
    this.routes = Map.copyOf(resolved);
    this.routeNames = List.copyOf(resolved.keySet());
    this.threads = b.threads;
    this.batchSize = b.batchSize;
    this.lease = b.lease;
    this.pollInterval = b.pollInterval;
    this.backoff = b.backoff;
    this.maxRetryAfter = b.maxRetryAfter;
    this.deleteDelivered = b.deleteDelivered;
    this.listener = b.listener;
    this.wakeOnCommit = b.wakeOnCommit;
  }

  public static Builder builder(Outbox outbox) {
    return new Builder(outbox);
  }

  public String name() {
    return name;
  }

  /** Starts the worker threads. A relay starts once. */
  public void start() {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("relay " + name + " was started already");
    }
    running = true;
    liveWorkers.set(threads);
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(this::work, "idem-relay-" + name + "-" + i);
      t.setDaemon(true);
      workers.add(t);
      t.start();
    }
    if (wakeOnCommit) {
      outbox.wakeups().add(this);
    }
  }

  /**
   * Wakes idle workers now instead of at their next poll. A started relay is woken after each commit that enqueued
   * events for its routes (see {@link Outbox}); call this for commits the outbox cannot see. Cheap when called often:
   * while a wake-up is on its way (a worker has not begun its next claim yet), another one only reads a flag.
   */
  public void wakeUp() {
    if (wakePending.get() || wakePending.getAndSet(true)) {
      return;
    }
    signal();
  }

  /** Whether this relay sends events of any of {@code routes}. */
  boolean servesAny(Set<String> routes) {
    for (String r : routes) {
      if (this.routes.containsKey(r)) {
        return true;
      }
    }
    return false;
  }

  private void signal() {
    lock.lock();
    try {
      wake.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /**
   * One cycle on the calling thread: claim a batch, send it, record the outcome.
   *
   * @return how many events were claimed (0 when nothing was due)
   */
  public int runOnce() {
    return cycle().claimed();
  }

  /**
   * A cycle's outcome: how many events it claimed, and whether it delivered an event of an ordered type, whose
   * successor on its aggregate is due now (a claim takes only the head of each aggregate).
   */
  private record Cycle(int claimed, boolean successorsDue) {}

  private Cycle cycle() {
    String token = name + "/" + UUID.randomUUID();
    Instant claimedAt = outbox.clock().instant();
    List<ClaimedEvent> batch = store.claim(token, routeNames, claimedAt, claimedAt.plus(lease), batchSize);
    if (batch.isEmpty()) {
      return new Cycle(0, false);
    }
    safely(() -> listener.claimed(name, batch.size()));
    long leaseEnds = System.nanoTime() + lease.toNanos();
    Map<String, List<ClaimedEvent>> byRoute = new LinkedHashMap<>();
    for (ClaimedEvent c : batch) {
      byRoute.computeIfAbsent(Limits.route(c.message().destination()), k -> new ArrayList<>()).add(c);
    }
    List<ClaimedEvent> delivered = new ArrayList<>(batch.size());
    List<FailedDelivery> failures = new ArrayList<>();
    List<ClaimedEvent> unsent = new ArrayList<>();
    Map<OutboxMessage, DecryptionException> unopened = new LinkedHashMap<>();
    Instant now = outbox.clock().instant();
    for (Map.Entry<String, List<ClaimedEvent>> e : byRoute.entrySet()) {
      Route route = routes.get(e.getKey()); // the claim returns only this relay's routes
      if (!running && !workers.isEmpty() || System.nanoTime() >= leaseEnds) {
        unsent.addAll(e.getValue()); // stopping, or the lease ran out before this route's turn: give them back unsent
        continue;
      }
      List<ClaimedEvent> rows = new ArrayList<>(e.getValue().size());
      for (ClaimedEvent c : e.getValue()) {
        try {
          rows.add(opened(c));
        } catch (DecryptionException ex) {
          unopened.put(c.message(), ex);
          failures.add(new FailedDelivery(c, DeliveryResult.permanent("the sealed payload cannot be opened ("
              + ex.reason() + (ex.keyId() == null ? "" : ", key '" + ex.keyId() + "'") + "): " + ex.getMessage()
              + "; it was not sent", null), true, now));
        } catch (RuntimeException ex) {
          safely(() -> listener.relayError(name, ex));
          failures.add(failure(c, DeliveryResult.retry("opening the sealed payload failed: "
              + OutboxTransport.describe(ex), null), route.maxAttempts(), now));
        }
      }
      if (rows.isEmpty()) {
        continue;
      }
      List<OutboxMessage> messages = rows.stream().map(ClaimedEvent::message).toList();
      List<DeliveryResult> results;
      try {
        results = route.transport().sendAll(messages);
        if (results == null || results.size() != messages.size()) {
          throw new IllegalStateException("transport of route '" + e.getKey() + "' returned "
              + (results == null ? "null" : results.size() + " results") + " for " + messages.size() + " messages");
        }
      } catch (Throwable ex) {
        // the route's outcome is unknown: every message of it is a failed attempt; other routes are still marked.
        // A StackOverflowError or another Error of the transport is that too; only the JVM's own end the worker
        rethrowIfFatal(ex);
        safely(() -> listener.relayError(name, ex));
        results = Collections.nCopies(messages.size(), DeliveryResult.retry(OutboxTransport.describe(ex), null));
      }
      now = outbox.clock().instant();
      for (int i = 0; i < rows.size(); i++) {
        DeliveryResult r = Objects.requireNonNullElseGet(results.get(i),
            () -> DeliveryResult.retry("transport returned no result", null));
        if (r.isDelivered()) {
          delivered.add(rows.get(i));
        } else {
          failures.add(failure(rows.get(i), r, route.maxAttempts(), now));
        }
      }
    }
    int lost = delivered.size() + failures.size()
        - store.finish(token, delivered, failures, deleteDelivered, outbox.clock().instant());
    if (lost > 0) {
      safely(() -> listener.leaseLost(name, lost));
    }
    if (!unsent.isEmpty()) {
      store.release(token, unsent, outbox.clock().instant());
    }
    Instant done = outbox.clock().instant();
    unopened.forEach((m, ex) -> safely(() -> listener.decryptionFailed(name, m, ex)));
    for (ClaimedEvent c : delivered) {
      safely(() -> listener.delivered(name, c.message(), Duration.between(c.message().createdAt(), done)));
    }
    for (FailedDelivery f : failures) {
      safely(() -> listener.failed(name, f.claimed().message(), f.result(), f.dead()));
    }
    boolean successorsDue = false;
    for (ClaimedEvent c : delivered) {
      successorsDue |= outbox.isOrdered(c.message().type());
    }
    return new Cycle(batch.size(), successorsDue);
  }

  /** The claimed event with its payload opened when it is sealed. */
  private ClaimedEvent opened(ClaimedEvent c) {
    OutboxMessage m = c.message();
    String payload = outbox.open(m.id(), m.destination(), m.payload());
    if (payload.equals(m.payload())) {
      return c;
    }
    return new ClaimedEvent(c.seq(), new OutboxMessage(m.id(), m.type(), m.aggregateType(), m.aggregateId(), payload,
        m.headers(), m.destination(), m.attempt(), m.createdAt()), c.attempts(), c.attemptBase());
  }

  private FailedDelivery failure(ClaimedEvent c, DeliveryResult r, int maxAttempts, Instant now) {
    int sinceReplay = c.attempts() + 1 - c.attemptBase();
    boolean dead = r.kind() == DeliveryResult.Kind.PERMANENT || sinceReplay >= maxAttempts;
    // a destination's Retry-After (capped at maxRetryAfter) lengthens the backoff, never shortens it
    long asked = r.retryAfter().map(a -> (a.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : a).toNanos()).orElse(0L);
    // the relay keeps no previous delay: decorrelated jitter grows from the exponential delay of the retry before
    long delay = Math.max(backoff.delayNanos(Math.max(1, sinceReplay), ThreadLocalRandom.current()), asked);
    return new FailedDelivery(c, r, dead, dead ? now : now.plusNanos(delay));
  }

  /**
   * Whether {@code e} must end the worker: an error of the JVM's own ({@link OutOfMemoryError}, {@link InternalError},
   * {@link UnknownError}), but not a {@link StackOverflowError}, whose stack has unwound by the time it is caught.
   */
  static boolean fatal(Throwable e) {
    return e instanceof VirtualMachineError && !(e instanceof StackOverflowError);
  }

  private static void rethrowIfFatal(Throwable e) {
    if (fatal(e)) {
      throw (VirtualMachineError) e;
    }
  }

  private void work() {
    try {
      loop();
    } catch (VirtualMachineError e) {
      int left = liveWorkers.decrementAndGet();
      LOG.log(System.Logger.Level.ERROR, "relay " + name + " worker " + Thread.currentThread().getName()
          + " stopped by " + e + "; " + left + " of " + threads + " workers left", e);
      safely(() -> listener.relayError(name, e));
      throw e;
    } catch (RuntimeException | Error e) {
      liveWorkers.decrementAndGet(); // loop() lets only fatal errors out; anything else ends the worker all the same
      throw e;
    }
    liveWorkers.decrementAndGet();
  }

  private void loop() {
    long errorDelay = 0;
    while (running) {
      int claimed;
      try {
        // a commit that wakes the relay from here on is seen by this claim, or makes the worker look again
        wakePending.set(false);
        Cycle cycle = cycle();
        claimed = cycle.claimed();
        if (cycle.successorsDue()) {
          wakePending.set(true); // look again at once: the next event of each aggregate sent is due
        }
        errorDelay = 0;
      } catch (Throwable e) {
        rethrowIfFatal(e);
        // a broken transport or listener must not silently end the worker; its rows come back when the lease ends
        LOG.log(System.Logger.Level.WARNING, "relay " + name + " cycle failed; backing off: " + e);
        safely(() -> listener.relayError(name, e));
        errorDelay = Math.min(5_000, Math.max(100, errorDelay * 2));
        pause(TimeUnit.MILLISECONDS.toNanos(errorDelay), false);
        continue;
      }
      if (claimed < batchSize) {
        pause(pollInterval.toNanos(), true);
      }
    }
  }

  /**
   * Waits up to {@code nanos} or until signalled; with {@code idle}, not at all when a wake-up came since the last
   * claim began (checked under the lock that {@link #signal} takes, so no wake-up is lost).
   */
  private void pause(long nanos, boolean idle) {
    lock.lock();
    try {
      if (running && !(idle && wakePending.get())) {
        wake.awaitNanos(nanos);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (running) {
        LOG.log(System.Logger.Level.WARNING, "relay " + name + " stopped: worker " + Thread.currentThread().getName()
            + " was interrupted");
      }
      running = false;
    } finally {
      lock.unlock();
    }
  }

  private static void safely(Runnable r) {
    try {
      r.run();
    } catch (Throwable e) {
      rethrowIfFatal(e);
      // a listener must not stop the relay, whatever it throws short of the JVM's own errors
    }
  }

  /**
   * Stops the workers: each finishes the batch it is sending (marking what was sent), gives back rows it had not
   * started, and exits. Waits up to the lease for them. Transports are not closed: they belong to the caller.
   */
  @Override
  public void close() {
    running = false;
    outbox.wakeups().remove(this);
    signal();
    long deadline = System.nanoTime() + lease.toNanos();
    for (Thread t : workers) {
      try {
        long left = deadline - System.nanoTime();
        if (left > 0) {
          t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /**
   * Whether the relay is started, not closed, and at least one of its workers is alive: an error of the JVM's own
   * ({@link OutOfMemoryError}, {@link InternalError}) ends the worker it hits, reported to the log and to
   * {@link OutboxListener#relayError}, and a relay whose workers all ended is not running.
   */
  public boolean isRunning() {
    return running && liveWorkers.get() > 0;
  }

  @Override
  public String toString() {
    return "OutboxRelay{" + name + ", routes=" + routes.keySet() + ", threads=" + threads + ", batch=" + batchSize
        + ", lease=" + lease + '}';
  }

  /** Builds an {@link OutboxRelay}; at least one {@link #route} is required. */
  public static final class Builder {
    private final Outbox outbox;
    private String name = "relay-" + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffL);
    private final Map<String, Route> routes = new LinkedHashMap<>();
    private int threads = 1;
    private int batchSize = 100;
    private Duration lease = Duration.ofSeconds(60);
    private Duration pollInterval = Duration.ofMillis(50);
    private Backoff backoff = Backoff.exponential(Duration.ofSeconds(1), Duration.ofHours(1), Jitter.EQUAL);
    private Duration maxRetryAfter = Duration.ofHours(24);
    private int maxAttempts = 12;
    private boolean deleteDelivered;
    private OutboxListener listener = new OutboxListener() {};
    private boolean wakeOnCommit = true;

    private Builder(Outbox outbox) {
      this.outbox = Objects.requireNonNull(outbox, "outbox");
    }

    /** This relay's name, in thread names, claim tokens and listener calls. */
    public Builder name(String name) {
      this.name = Limits.text("name", name, 24);
      return this;
    }

    /** Sends the events of destination route {@code route} through {@code transport}; see {@link #maxAttempts(int)}. */
    public Builder route(String route, OutboxTransport transport) {
      return route(route, transport, -1);
    }

    /** As {@link #route(String, OutboxTransport)}, dead after {@code maxAttempts} attempts. */
    public Builder route(String route, OutboxTransport transport, int maxAttempts) {
      if (route == null || route.indexOf(':') >= 0) {
        throw new IllegalArgumentException("route must be the part of a destination before ':', got '" + route + "'");
      }
      Limits.destination(route);
      Objects.requireNonNull(transport, "transport");
      if (maxAttempts != -1) {
        Limits.range("maxAttempts", maxAttempts, 1, 1000);
      }
      if (routes.containsKey(route)) {
        throw new IllegalArgumentException("route '" + route + "' has a transport already");
      }
      routes.put(route, new Route(transport, maxAttempts));
      return this;
    }

    /** Attempts before an event is dead, for routes without their own (default 12). */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = Limits.range("maxAttempts", maxAttempts, 1, 1000);
      return this;
    }

    /** Worker threads (default 1). */
    public Builder threads(int threads) {
      this.threads = Limits.range("threads", threads, 1, 64);
      return this;
    }

    /** Events claimed per cycle (default 100). */
    public Builder batchSize(int batchSize) {
      this.batchSize = Limits.range("batchSize", batchSize, 1, 5000);
      return this;
    }

    /**
     * How long a claim holds its rows (default 60 s). Make it comfortably longer than a batch takes to send (the
     * webhook transport's timeout is 15 s): a row whose lease ends mid-send may be sent by another relay too.
     */
    public Builder lease(Duration lease) {
      this.lease = Limits.range("lease must be 100 ms to 1 h", lease, Duration.ofMillis(100), Duration.ofHours(1));
      return this;
    }

    /**
     * How long an idle worker waits before looking again (default 50 ms); a commit that enqueued events for one of
     * the relay's routes ({@link #wakeOnCommit}) and {@link #wakeUp()} cut it short.
     */
    public Builder pollInterval(Duration interval) {
      this.pollInterval = Limits.range("pollInterval must be > 0 and at most 1 min", interval, Duration.ofNanos(1),
          Duration.ofMinutes(1));
      return this;
    }

    /** Delays between attempts (default exponential from 1 s to 1 h, equal jitter). */
    public Builder backoff(Backoff backoff) {
      this.backoff = Objects.requireNonNull(backoff, "backoff");
      return this;
    }

    /** The longest {@code Retry-After} a destination may impose (default 24 h). */
    public Builder maxRetryAfter(Duration max) {
      this.maxRetryAfter = Limits.range("maxRetryAfter must be 0 to 30 days", max, Duration.ZERO, Duration.ofDays(30));
      return this;
    }

    /** Delete delivered rows at once instead of marking them (default false: mark, purge later). */
    public Builder deleteDelivered(boolean delete) {
      this.deleteDelivered = delete;
      return this;
    }

    /**
     * Whether the started relay is woken after each commit that enqueued events for one of its routes, on the outbox
     * object it was built on (default true; see {@link Outbox}). Off, it finds new events at its next poll, or when
     * {@link #wakeUp()} is called.
     */
    public Builder wakeOnCommit(boolean wake) {
      this.wakeOnCommit = wake;
      return this;
    }

    public Builder listener(OutboxListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    public OutboxRelay build() {
      if (routes.isEmpty()) {
        throw new IllegalStateException("a relay needs at least one route(name, transport)");
      }
      return new OutboxRelay(this);
    }
  }
}
