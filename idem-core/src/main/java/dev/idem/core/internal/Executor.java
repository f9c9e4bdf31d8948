package dev.idem.core.internal;

import dev.idem.core.AtomicWork;
import dev.idem.core.AuditEntry;
import dev.idem.core.Checkpoint;
import dev.idem.core.ConfigurationException;
import dev.idem.core.Execution;
import dev.idem.core.IdemException;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.KeepPolicy;
import dev.idem.core.LeaseLostException;
import dev.idem.core.LeasedWork;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.core.PhaseContext;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.Reconciler;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.ResponseTooLargeException;
import dev.idem.core.StoreException;
import dev.idem.core.StoredResponse;
import dev.idem.core.WorkFailedException;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.spi.IdemListener;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.Sleeper;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The engine behind {@link dev.idem.core.Idem}. Thread-safe.
 *
 * <p>Implementation note: the database decides every race. Atomic mode reads the record first only to replay
 * cheaply; the decision that a request runs is the insert of the finished record at the end of the business
 * transaction, guarded by the primary key. A concurrent duplicate runs its work too, then its insert waits on the
 * winner's uncommitted row; when the winner commits, the insert fails, the duplicate's transaction (with its
 * business writes) rolls back, and the duplicate replays the winner's response. One insert per execution is the
 * cheapest correct write: claim-first (insert, then update) costs a second write of the same row. Phased and
 * leased modes must claim first, because their work spans several transactions; every later write there is
 * conditional on the version read (fencing).
 */
public final class Executor {
  private static final int MAX_ROUNDS = 8;
  private static final Duration MIN_POLL = Duration.ofMillis(10);
  private static final Duration MAX_POLL = Duration.ofMillis(250);

  private final String name;
  private final IdempotencyStore store;
  private final Clock clock;
  private final Sleeper sleeper;
  private final IdemListener listener;
  private final OperationPolicy defaultPolicy;
  private final Map<Operation, OperationPolicy> policies;
  private final Map<Operation, PhasedOperation> phased;
  private final Map<OperationPolicy, Fingerprinter> fingerprinters = new ConcurrentHashMap<>();
  private final String owner;
  private final boolean timed;

  public Executor(String name, IdempotencyStore store, Clock clock, Sleeper sleeper, IdemListener listener,
      OperationPolicy defaultPolicy, Map<Operation, OperationPolicy> policies,
      Map<Operation, PhasedOperation> phased) {
    this.name = name;
    this.store = store;
    this.clock = clock;
    this.sleeper = sleeper;
    this.listener = listener;
    this.defaultPolicy = defaultPolicy;
    this.policies = policies;
    this.phased = phased;
    this.owner = name + "/" + ProcessHandle.current().pid() + "/" + UUID.randomUUID().toString().substring(0, 8);
    this.timed = listener != IdemListener.NOOP;
  }

  public String name() {
    return name;
  }

  public IdempotencyStore store() {
    return store;
  }

  public Clock clock() {
    return clock;
  }

  public IdemListener listener() {
    return listener;
  }

  public OperationPolicy policy(Operation operation) {
    return policies.getOrDefault(operation, defaultPolicy);
  }

  public Optional<PhasedOperation> phasedOperation(Operation operation) {
    return Optional.ofNullable(phased.get(operation));
  }

  /** The operations registered for phased mode: the completer's view of the store. */
  public java.util.Set<Operation> phasedOperations() {
    return phased.keySet();
  }

  /** The phased operations that have a {@link Reconciler}: what the reconciliation rounds ask about. */
  public List<Operation> reconciledOperations() {
    return phased.values().stream().filter(p -> p.reconciler().isPresent()).map(PhasedOperation::operation).toList();
  }

  /** The fingerprint of a request under its operation's policy. */
  public Fingerprint fingerprint(IdempotentRequest request, OperationPolicy policy) {
    if (request.fingerprint() != null) {
      return request.fingerprint();
    }
    Fingerprinter f = fingerprinters.computeIfAbsent(policy, p -> Fingerprinter.of(p.fingerprint()));
    return f.fingerprint(request.operation().name(), request.body(), request.contentType());
  }

  // ---------------------------------------------------------------- atomic

  public Execution atomic(IdempotentRequest request, AtomicWork work) {
    try {
      return atomicRounds(request, work);
    } catch (AnsweredByExisting answered) {
      return answered.execution;
    }
  }

  private Execution atomicRounds(IdempotentRequest request, AtomicWork work) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(work, "work");
    if (!store.transactional()) {
      throw new ConfigurationException("store '" + store.name() + "' has no transactions, so atomic mode cannot"
          + " run on it; use leased mode (Idem.leased) or a transactional store");
    }
    long started = System.nanoTime();
    OperationPolicy policy = policy(request.operation());
    Fingerprint fingerprint = fingerprint(request, policy);
    RecordKey key = request.recordKey();
    boolean lookup = policy.lookupFirst() && !request.isFirstAttempt();
    for (int round = 1; round <= MAX_ROUNDS; round++) {
      if (round > 1) {
        // After a collision or a transient failure, read the committed record on a fresh connection: a joined
        // caller's transaction may hold a snapshot older than the record that collided.
        Optional<IdempotencyRecord> existing = findCommitted(key);
        Instant now = clock.instant();
        if (existing.isPresent() && !existing.get().isGone(now)) {
          return done(decideExisting(existing.get(), fingerprint, now), started);
        }
      }
      boolean lookupThisRound = lookup;
      Execution decided;
      try {
        decided = transaction(tx -> atomicRound(tx, key, fingerprint, policy, work, lookupThisRound));
      } catch (StoreException e) {
        if (e.isLockTimeout()) {
          return done(Execution.inProgress(key, Duration.ofSeconds(1)), started);
        }
        if (e.isTransient() && round < MAX_ROUNDS) {
          lookup = true;
          continue;
        }
        throw released(key, fingerprint, e, started);
      } catch (RuntimeException e) {
        throw released(key, fingerprint, e, started);
      }
      if (decided != null) {
        if (decided.outcome() == Execution.Outcome.STORED) {
          listener.onTransition(name, key, null, KeepPolicy.stateFor(decided.response().status()), null);
        } else if (decided.outcome() == Execution.Outcome.NOT_STORED) {
          Optional<IdempotencyRecord> live = lookupThisRound ? Optional.empty() : liveRecord(key, null);
          if (live.isPresent()) {
            return done(decideExisting(live.get(), fingerprint, clock.instant()), started);
          }
          listener.onReleased(name, key, null);
        }
        return done(decided, started);
      }
      // The insert collided: a concurrent duplicate committed first, or an expired record is in the way. The next
      // round looks it up, then replays it or replaces it.
      lookup = true;
    }
    return done(Execution.inProgress(key, Duration.ofSeconds(1)), started);
  }

  /**
   * The work failed and its transaction rolled back. The failure may be only the echo of a concurrent duplicate: its
   * business insert collided with the original's row (a payment id derived from the key, say), which it waited for
   * until the original committed. If a live record exists now, the answer is that record's, not the failure. Costs
   * one read, on failures only.
   */
  private RuntimeException released(RecordKey key, Fingerprint fingerprint, RuntimeException e, long started) {
    Optional<IdempotencyRecord> live = liveRecord(key, e);
    if (live.isPresent()) {
      throw new AnsweredByExisting(done(decideExisting(live.get(), fingerprint, clock.instant()), started));
    }
    listener.onReleased(name, key, e);
    return e;
  }

  /**
   * The committed record of {@code key} if it is live: read after work that failed ({@link #released}), or that
   * answered with a status that is not kept after the look-up before it was skipped. Either may be only the echo of
   * a duplicate (a conflict with the original's rows), so a live record answers instead. A failed read counts as no
   * record; it is added to {@code failure}, when given, as a suppressed exception.
   */
  private Optional<IdempotencyRecord> liveRecord(RecordKey key, RuntimeException failure) {
    try {
      Optional<IdempotencyRecord> existing = findCommitted(key);
      return existing.isPresent() && !existing.get().isGone(clock.instant()) ? existing : Optional.empty();
    } catch (StoreException lookupFailed) {
      if (failure != null) {
        failure.addSuppressed(lookupFailed);
      }
      return Optional.empty();
    }
  }

  /** Carries a decision out of {@link #released}; caught in {@link #atomic}. */
  private static final class AnsweredByExisting extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient Execution execution;

    AnsweredByExisting(Execution execution) {
      super(null, null, false, false);
      this.execution = execution;
    }
  }

  private Execution atomicRound(StoreTransaction tx, RecordKey key, Fingerprint fingerprint, OperationPolicy policy,
      AtomicWork work, boolean lookup) throws Exception {
    Instant now = clock.instant();
    if (lookup) {
      Optional<IdempotencyRecord> existing = find(tx, key);
      if (existing.isPresent()) {
        IdempotencyRecord record = existing.get();
        if (!record.isGone(now)) {
          return decideExisting(record, fingerprint, now);
        }
        deleteIfExpired(tx, key, now);
      }
    }
    StoredResponse response;
    try {
      response = work.execute(tx);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new WorkFailedException(key, e);
    }
    if (response == null) {
      throw new IllegalStateException("work of " + key.operation() + " returned no response");
    }
    if (!policy.keep().keeps(response.status())) {
      tx.setRollbackOnly();
      return Execution.notStored(key, response);
    }
    checkSize(key, response, policy);
    IdempotencyRecord record = IdempotencyRecord.finished(
        key, stored(fingerprint), response, KeepPolicy.stateFor(response.status()), now, policy.ttl(),
        policy.retention());
    if (!insertLast(tx, record)) {
      tx.setRollbackOnly();
      return null;
    }
    return Execution.stored(key, response);
  }

  // ---------------------------------------------------------------- phased

  public Execution phased(IdempotentRequest request) {
    Objects.requireNonNull(request, "request");
    PhasedOperation operation = phased.get(request.operation());
    if (operation == null) {
      throw new ConfigurationException("Idem '" + name + "': no phased operation is registered for "
          + request.operation() + "; register it with Idem.builder().phased(...)");
    }
    refuseJoinedTransaction("phased", request.operation());
    long started = System.nanoTime();
    OperationPolicy policy = policy(request.operation());
    Fingerprint fingerprint = fingerprint(request, policy);
    if (store.transactional()) {
      try {
        Execution first = firstPhase(operation, request, fingerprint, policy, started);
        if (first != null) {
          return first;
        }
      } catch (AnsweredByExisting answered) {
        return answered.execution;
      }
    }
    Claim claim = claim(request.recordKey(), fingerprint, policy);
    if (claim.decided != null) {
      return done(claim.decided, started);
    }
    return done(runPhases(operation, claim.record, request, claim.resumed, policy, Duration.ZERO), started);
  }

  /**
   * A new key on a transactional store: the first phase runs, and the record is inserted at its recovery point as
   * the last write of that phase's transaction, so the claim costs no transaction of its own and a crash during the
   * first phase leaves nothing behind. A concurrent duplicate also runs the first phase, then waits on the unique
   * index, and rolls all of it back when the original commits (as in atomic mode). The record is looked up first
   * unless the policy's {@code lookupFirst} is off or the request says it is a first attempt: then the unique index
   * decides, and only a later round (after a collision or a transient failure) reads it, or an answer that is not
   * kept. Returns {@code null} when a live record exists: the caller then replays, refuses, waits or resumes it.
   */
  private Execution firstPhase(PhasedOperation operation, IdempotentRequest request, Fingerprint fingerprint,
      OperationPolicy policy, long started) {
    RecordKey key = request.recordKey();
    PhasedOperation.Step step = operation.steps().get(0);
    boolean last = operation.steps().size() == 1;
    boolean lookup = policy.lookupFirst() && !request.isFirstAttempt();
    for (int round = 1; round <= MAX_ROUNDS; round++) {
      boolean lookedUp = lookup || round > 1;
      Optional<IdempotencyRecord> existing = lookedUp ? findCommitted(key) : Optional.empty();
      Instant now = clock.instant();
      if (existing.isPresent()) {
        if (!existing.get().isGone(now)) {
          return null;
        }
        transaction(tx -> deleteIfExpired(tx, key, now));
      }
      IdempotencyRecord claimed =
          IdempotencyRecord.claimed(key, stored(fingerprint), owner, now, policy.lease(), policy.ttl(),
              policy.retention());
      Object[] outcome = new Object[2];
      IdempotencyRecord written;
      try {
        written = transaction(tx -> {
          PhaseResult result =
              step.phase().run(new Context(key, claimed, claimed.checkpoint(), request, false, tx));
          outcome[0] = result;
          IdempotencyRecord next;
          if (result.isResponse()) {
            StoredResponse response = result.response();
            if (!kept(result, policy)) {
              tx.setRollbackOnly();
              return null;
            }
            checkSize(key, response, policy);
            next = claimed.finish(KeepPolicy.stateFor(response.status()), response, clock.instant());
          } else if (last) {
            throw new IllegalStateException("the last phase '" + step.name() + "' of " + key.operation()
                + " must respond (PhaseResult.respond), not go on");
          } else {
            Instant at = clock.instant();
            next = claimed.withRecoveryPoint(step.name(), result.checkpoint(), at.plus(policy.lease()), at);
          }
          if (!insertLast(tx, next)) {
            tx.setRollbackOnly();
            outcome[1] = Boolean.TRUE;
            return null;
          }
          return next;
        });
      } catch (StoreException e) {
        if (e.isLockTimeout()) {
          return done(Execution.inProgress(key, Duration.ofSeconds(1)), started);
        }
        if (e.isTransient() && round < MAX_ROUNDS) {
          continue;
        }
        throw released(key, fingerprint, e, started);
      } catch (RuntimeException e) {
        throw released(key, fingerprint, e, started);
      }
      if (outcome[1] != null) {
        continue;
      }
      PhaseResult result = (PhaseResult) outcome[0];
      if (written == null) {
        if (!lookedUp && liveRecord(key, null).isPresent()) {
          return null;
        }
        listener.onReleased(name, key, null);
        return done(Execution.notStored(key, result.response()), started);
      }
      listener.onTransition(name, key, null, RecordState.IN_PROGRESS, step.name());
      if (result.isResponse()) {
        listener.onTransition(name, key, RecordState.IN_PROGRESS, written.state(), step.name());
        return done(Execution.stored(key, result.response()), started);
      }
      return done(runPhases(operation, written, request, false, policy, Duration.ZERO), started);
    }
    return done(Execution.inProgress(key, Duration.ofSeconds(1)), started);
  }

  /**
   * Runs the phases after the record's recovery point, each in its own unit, and finishes or releases the record.
   * Used by client requests and by the completer ({@code request == null}). After a failure the lease is released
   * for {@code holdAfterFailure}: zero for a client (its retry may resume at once), a lease for the completer (the
   * record waits its turn).
   */
  public Execution runPhases(PhasedOperation operation, IdempotencyRecord held, IdempotentRequest request,
      boolean resumed, OperationPolicy policy, Duration holdAfterFailure) {
    IdempotencyRecord current = held;
    RecordKey key = held.key();
    var steps = operation.steps();
    // The checkpoint of a repeatable outside phase, not written yet: the next phase's transaction writes it.
    Checkpoint carried = null;
    for (int i = operation.indexAfter(held.recoveryPoint()); i < steps.size(); i++) {
      PhasedOperation.Step step = steps.get(i);
      boolean last = i == steps.size() - 1;
      IdempotencyRecord before = current;
      Checkpoint seen = carried != null ? carried : before.checkpoint();
      carried = null;
      Object[] outcome = new Object[2];
      try {
        if (step.transactional()) {
          current = transaction(tx -> {
            Context context = new Context(key, before, seen, request, resumed, tx);
            PhaseResult result = step.phase().run(context);
            outcome[0] = result;
            return advance(tx, before, step.name(), result, last, policy, operation.release(), context);
          });
        } else {
          PhaseResult result = step.phase().run(new Context(key, before, seen, request, resumed, null));
          outcome[0] = result;
          if (step.repeatable() && !result.isResponse() && !last && steps.get(i + 1).transactional()) {
            carried = result.checkpoint();
            continue;
          }
          current = transaction(tx -> advance(tx, before, step.name(), result, last, policy, operation.release(),
              new Context(key, before, seen, request, resumed, tx).afterOutsideCall()));
        }
      } catch (LeaseLostException e) {
        throw e;
      } catch (ResponseTooLargeException e) {
        // an answering transactional phase rolled back; the committed phases before it stay, and so does the record
        release(before, e, holdAfterFailure, step.transactional(), policy);
        throw before.recoveryPoint() == null || !step.transactional() ? e
            : new ResponseTooLargeException(key, e.size(), e.limit(), null, before.recoveryPoint());
      } catch (RuntimeException e) {
        release(before, e, holdAfterFailure, step.transactional(), policy);
        throw e;
      } catch (Exception e) {
        release(before, e, holdAfterFailure, step.transactional(), policy);
        throw new WorkFailedException(key, e);
      }
      PhaseResult result = (PhaseResult) outcome[0];
      if (result.isResponse()) {
        StoredResponse response = result.response();
        if (current == null) {
          // not kept: the phase's transaction rolled back; give the lease up so a retry can resume
          release(before, null, holdAfterFailure, step.transactional(), policy);
          return Execution.notStored(key, response);
        }
        listener.onTransition(name, key, RecordState.IN_PROGRESS, current.state(), step.name());
        if (!step.transactional() && response.size() > policy.maxResponseBytes()) {
          // the outside call took effect and cannot be undone: the record ended with the substitute (advance)
          throw new ResponseTooLargeException(key, response.size(), policy.maxResponseBytes(), current.response(),
              null);
        }
        return Execution.stored(key, response);
      }
    }
    throw new IllegalStateException("phased operation " + operation.operation() + " ended without a response");
  }

  /**
   * Writes one phase's outcome, conditional on the version held, as the last write of the phase's transaction.
   * Returns the new record, or null if not kept. A refusal first runs the operation's release step in {@code tx}, so
   * what it gives back commits with the end of the record or not at all.
   */
  private IdempotencyRecord advance(StoreTransaction tx, IdempotencyRecord held, String phase, PhaseResult result,
      boolean last, OperationPolicy policy, PhasedOperation.Release release, Context context) throws Exception {
    IdempotencyRecord next;
    if (result.isResponse()) {
      StoredResponse response = result.response();
      if (!kept(result, policy)) {
        tx.setRollbackOnly();
        return null;
      }
      if (response.size() > policy.maxResponseBytes() && context.outside) {
        // An outside phase's answer: its call took effect, so the record ends with a small substitute that says so,
        // instead of being released and the call repeated by a retry.
        if (result.isRefusal()) {
          release.run(context);
        }
        next = held.finish(RecordState.FAILED, ResponseTooLargeException.substitute(policy.maxResponseBytes()),
            clock.instant());
      } else {
        checkSize(held.key(), response, policy);
        if (result.isRefusal()) {
          release.run(context);
        }
        next = held.finish(KeepPolicy.stateFor(response.status()), response, clock.instant());
      }
    } else if (last) {
      throw new IllegalStateException("the last phase '" + phase + "' of " + held.key().operation()
          + " must respond (PhaseResult.respond), not go on");
    } else {
      Instant now = clock.instant();
      next = held.withRecoveryPoint(phase, result.checkpoint(), now.plus(policy.lease()), now);
    }
    if (!updateLast(tx, next)) {
      tx.setRollbackOnly();
      throw new LeaseLostException(held.key(), held.version(), phase);
    }
    return next;
  }

  // ---------------------------------------------------------------- leased

  public Execution leased(IdempotentRequest request, LeasedWork work) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(work, "work");
    refuseJoinedTransaction("leased", request.operation());
    long started = System.nanoTime();
    OperationPolicy policy = policy(request.operation());
    Fingerprint fingerprint = fingerprint(request, policy);
    Claim claim = claim(request.recordKey(), fingerprint, policy);
    if (claim.decided != null) {
      return done(claim.decided, started);
    }
    IdempotencyRecord held = claim.record;
    RecordKey key = held.key();
    StoredResponse response;
    try {
      response = work.execute(key.key());
      if (response == null) {
        throw new IllegalStateException("work of " + key.operation() + " returned no response");
      }
    } catch (ResponseTooLargeException e) {
      // the work ran and says its answer outgrew the limit (a servlet filter's buffer): applied, keep a stand-in
      throw keptInstead(held, e.size(), policy);
    } catch (RuntimeException e) {
      release(held, e, Duration.ZERO, true, policy);
      throw e;
    } catch (Exception e) {
      release(held, e, Duration.ZERO, true, policy);
      throw new WorkFailedException(key, e);
    }
    if (!policy.keep().keeps(response.status())) {
      release(held, null, Duration.ZERO, true, policy);
      return done(Execution.notStored(key, response), started);
    }
    if (response.size() > policy.maxResponseBytes()) {
      throw keptInstead(held, response.size(), policy);
    }
    IdempotencyRecord next = held.finish(KeepPolicy.stateFor(response.status()), response, clock.instant());
    boolean written = transaction(tx -> updateLast(tx, next));
    if (!written) {
      throw new LeaseLostException(key, held.version(), null);
    }
    listener.onTransition(name, key, RecordState.IN_PROGRESS, next.state(), null);
    return done(Execution.stored(key, response), started);
  }

  /**
   * Leased work ran (its effects are not rolled back), but its answer is larger than the policy keeps: the record ends
   * FAILED with a small substitute that says so ({@link ResponseTooLargeException#substitute}), so that every replay
   * returns it and the work never runs again. Returns the exception for the caller, which carries the substitute.
   */
  private ResponseTooLargeException keptInstead(IdempotencyRecord held, long size, OperationPolicy policy) {
    RecordKey key = held.key();
    StoredResponse substitute = ResponseTooLargeException.substitute(policy.maxResponseBytes());
    IdempotencyRecord next = held.finish(RecordState.FAILED, substitute, clock.instant());
    if (!transaction(tx -> updateLast(tx, next))) {
      throw new LeaseLostException(key, held.version(), null);
    }
    listener.onTransition(name, key, RecordState.IN_PROGRESS, RecordState.FAILED, null);
    return new ResponseTooLargeException(key, size, policy.maxResponseBytes(), substitute, null);
  }

  /**
   * Phased and leased modes claim the key and complete it in commits of their own, so that a duplicate sees the claim
   * while the work runs and the record outlives whatever the caller does next. Inside a caller's open transaction
   * (a store bound to the caller's connection) they would commit nothing until the caller does: the claim would
   * protect nothing, and a caller that rolls back after the work called another system would erase its record.
   */
  private void refuseJoinedTransaction(String mode, Operation operation) {
    if (store.joinsCallerTransaction()) {
      throw new ConfigurationException("Idem '" + name + "': " + mode + " mode for " + operation + " cannot run"
          + " inside the caller's open transaction that store '" + store.name() + "' has joined (a connection bound"
          + " with auto-commit off, such as an ATOMIC @Idempotent method's or route's): its claim and completion need"
          + " commits of their own. Call it outside that transaction, or bind an auto-commit connection");
    }
  }

  // ---------------------------------------------------------------- claim, shared by phased and leased

  private static final class Claim {
    final Execution decided;
    final IdempotencyRecord record;
    final boolean resumed;

    Claim(Execution decided, IdempotencyRecord record, boolean resumed) {
      this.decided = decided;
      this.record = record;
      this.resumed = resumed;
    }
  }

  /**
   * Claims the key, takes an expired lease over, or waits for an in-flight duplicate for up to the policy's
   * {@linkplain OperationPolicy#inFlightWait() in-flight wait}. The wall clock decides only what the record says (its
   * lease, its expiry); the wait itself is timed on {@link System#nanoTime()}, so that a step of the wall clock
   * neither stretches nor cuts it. It also ends once the sleeps it asked for add up to the bound, which is what ends
   * it under a sleeper that does not really sleep (a test's).
   */
  private Claim claim(RecordKey key, Fingerprint fingerprint, OperationPolicy policy) {
    long bound = policy.inFlightWait().toNanos();
    long waitStarted = System.nanoTime();
    long slept = 0;
    Duration poll = MIN_POLL;
    for (int round = 1; ; round++) {
      Instant now = clock.instant();
      Optional<IdempotencyRecord> existing = findCommitted(key);
      if (existing.isPresent() && existing.get().isGone(now)) {
        transaction(tx -> deleteIfExpired(tx, key, now));
        existing = Optional.empty();
      }
      if (existing.isEmpty()) {
        IdempotencyRecord claimed =
            IdempotencyRecord.claimed(key, stored(fingerprint), owner, now, policy.lease(), policy.ttl(),
                policy.retention());
        boolean inserted;
        try {
          inserted = transaction(tx -> {
            if (insertLast(tx, claimed)) {
              return true;
            }
            tx.setRollbackOnly();
            return false;
          });
        } catch (StoreException e) {
          // the insert waited on a concurrent claim's uncommitted row for the store's lock timeout: as in atomic mode
          return lockTimedOut(key, e);
        }
        if (inserted) {
          listener.onTransition(name, key, null, RecordState.IN_PROGRESS, null);
          return new Claim(null, claimed, false);
        }
        if (round >= MAX_ROUNDS) {
          return new Claim(Execution.inProgress(key, Duration.ofSeconds(1)), null, false);
        }
        continue;
      }
      IdempotencyRecord record = existing.get();
      if (!record.fingerprint().matches(fingerprint) || record.state() != RecordState.IN_PROGRESS) {
        return new Claim(decideExisting(record, fingerprint, now), null, false);
      }
      if (record.isLeaseExpired(now)) {
        IdempotencyRecord taken = record.withLease(owner, now.plus(policy.lease()), now);
        boolean takenOver;
        try {
          takenOver = transaction(tx -> updateLast(tx, taken));
        } catch (StoreException e) {
          // another worker's takeover holds the row: it is in progress again
          return lockTimedOut(key, e);
        }
        if (takenOver) {
          listener.onLeaseExpired(name, record);
          return new Claim(null, taken, true);
        }
        continue;
      }
      long waited = Math.max(slept, System.nanoTime() - waitStarted);
      if (waited >= bound || round >= 10_000) {
        return new Claim(decideExisting(record, fingerprint, now), null, false);
      }
      Duration left = Duration.ofNanos(bound - waited);
      Duration untilLeaseEnds = Duration.between(now, record.lockedUntil());
      Duration nap = min(min(poll, left), untilLeaseEnds.isNegative() ? MIN_POLL : untilLeaseEnds);
      nap = nap.isZero() ? MIN_POLL : nap;
      try {
        sleeper.sleep(nap);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return new Claim(decideExisting(record, fingerprint, now), null, false);
      }
      slept += nap.toNanos();
      poll = min(poll.multipliedBy(2), MAX_POLL);
    }
  }

  /**
   * A claim's write that waited for the store's lock timeout on a row another worker holds: that worker's claim or
   * takeover is under way, so the answer is {@code IN_PROGRESS}, as atomic mode and the first phase answer it. Any
   * other store failure goes on as it is.
   */
  private static Claim lockTimedOut(RecordKey key, StoreException e) {
    if (!e.isLockTimeout()) {
      throw e;
    }
    return new Claim(Execution.inProgress(key, Duration.ofSeconds(1)), null, false);
  }

  /** Whether an answer ends the record: a refusal always does, another answer when the keep policy keeps it. */
  private static boolean kept(PhaseResult result, OperationPolicy policy) {
    return result.isRefusal() || policy.keep().keeps(result.response().status());
  }

  /**
   * The decision for a record found in the store that still holds its key (live, or a tombstone within its
   * retention). A tombstone never runs the request again: another request is a mismatch, the same one is refused as
   * expired.
   */
  private Execution decideExisting(IdempotencyRecord record, Fingerprint fingerprint, Instant now) {
    RecordKey key = record.key();
    if (!record.fingerprint().matches(fingerprint)) {
      return Execution.payloadMismatch(key, record.fingerprint().differingFields(fingerprint));
    }
    if (record.isRetained(now)) {
      return Execution.keyExpired(key, record.expiresAt());
    }
    if (record.state() == RecordState.UNCERTAIN) {
      return Execution.uncertain(key, record.updatedAt());
    }
    if (record.state().isFinal()) {
      return Execution.replayed(key, record.response(), Duration.between(record.createdAt(), now));
    }
    return Execution.inProgress(key, retryAfter(record, now));
  }

  private static Duration retryAfter(IdempotencyRecord record, Instant now) {
    if (record.lockedUntil() == null) {
      return Duration.ofSeconds(1);
    }
    long millis = Duration.between(now, record.lockedUntil()).toMillis();
    return Duration.ofSeconds(Math.max(1, (millis + 999) / 1000));
  }

  /**
   * Gives up the key after a failure: deletes a record no phase committed when the failed step left nothing behind
   * ({@code undone}: its transaction rolled back; leased work is the caller's to judge), or ends the lease (after
   * {@code hold}) of one that has committed phases, counting the failed resumption: past the operation's resume cap
   * the record becomes UNCERTAIN instead ({@link IdempotencyRecord#afterFailedResume}).
   */
  private void release(IdempotencyRecord held, Throwable cause, Duration hold, boolean undone,
      OperationPolicy policy) {
    try {
      if (held.recoveryPoint() == null && undone) {
        transaction(tx -> delete(tx, held.key(), held.version()));
        listener.onTransition(name, held.key(), RecordState.IN_PROGRESS, null, null);
      } else if (held.recoveryPoint() == null) {
        Instant now = clock.instant();
        transaction(tx -> updateLast(tx, held.withLease(null, now.plus(hold), now)));
      } else {
        IdempotencyRecord next = held.afterFailedResume(policy, hold, clock.instant());
        boolean written = transaction(tx -> updateLast(tx, next));
        if (written && next.state() == RecordState.UNCERTAIN) {
          listener.onTransition(name, held.key(), RecordState.IN_PROGRESS, RecordState.UNCERTAIN,
              held.recoveryPoint());
          listener.onUncertain(name, next, cause);
        }
      }
    } catch (RuntimeException suppressed) {
      if (cause != null) {
        cause.addSuppressed(suppressed);
      }
      // the lease runs out on its own; the completer or a retry takes over then
    }
    listener.onReleased(name, held.key(), cause);
  }

  // ---------------------------------------------------------------- helpers

  /**
   * What a record stores of a fingerprint: the field hashes only when they are few and short
   * ({@link Fingerprinter#MAX_FIELD_HASHES}, {@link Fingerprinter#MAX_FIELD_NAME}, which the fingerprinter already
   * keeps to; a fingerprint made otherwise is cut here), so that a hostile body cannot make every record large.
   * Without them a mismatch names no field; the decision is unchanged.
   */
  private static Fingerprint stored(Fingerprint fingerprint) {
    Map<String, String> fields = fingerprint.fieldHashes();
    if (fields.size() > Fingerprinter.MAX_FIELD_HASHES) {
      return Fingerprint.ofHash(fingerprint.hash());
    }
    for (String name : fields.keySet()) {
      if (name.length() > Fingerprinter.MAX_FIELD_NAME) {
        return Fingerprint.ofHash(fingerprint.hash());
      }
    }
    return fingerprint;
  }

  private void checkSize(RecordKey key, StoredResponse response, OperationPolicy policy) {
    long size = response.size();
    if (size > policy.maxResponseBytes()) {
      throw new ResponseTooLargeException(key, size, policy.maxResponseBytes());
    }
  }

  private Execution done(Execution execution, long startedNanos) {
    listener.onExecution(name, execution, Duration.ofNanos(System.nanoTime() - startedNanos));
    return execution;
  }

  private <R> R transaction(TransactionWork<R> work) {
    try {
      return store.inTransaction(work);
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IdemException("Idem '" + name + "': unexpected checked exception from the work", e);
    }
  }

  /** Runs one store call, reporting its latency to the listener when there is one. */
  private <T> T timed(String call, java.util.function.Supplier<T> storeCall) {
    if (!timed) {
      return storeCall.get();
    }
    long t = System.nanoTime();
    boolean ok = false;
    try {
      T result = storeCall.get();
      ok = true;
      return result;
    } finally {
      listener.onStoreCall(store.name(), call, System.nanoTime() - t, ok);
    }
  }

  private Optional<IdempotencyRecord> find(StoreTransaction tx, RecordKey key) {
    return timed("find", () -> store.find(tx, key));
  }

  private Optional<IdempotencyRecord> findCommitted(RecordKey key) {
    return timed("find", () -> store.find(key));
  }

  private boolean insertLast(StoreTransaction tx, IdempotencyRecord record) {
    return timed("insert", () -> store.insertLast(tx, record));
  }

  private boolean update(StoreTransaction tx, IdempotencyRecord next) {
    return timed("update", () -> store.update(tx, next));
  }

  /**
   * The record's update as the last write of a transaction the engine began (the store may commit with it); when it
   * did not apply, the transaction is marked rollback-only, whatever the store did.
   */
  private boolean updateLast(StoreTransaction tx, IdempotencyRecord next) {
    boolean applied = timed("update", () -> store.updateLast(tx, next));
    if (!applied) {
      tx.setRollbackOnly();
    }
    return applied;
  }

  private boolean delete(StoreTransaction tx, RecordKey key, long version) {
    return timed("delete", () -> store.delete(tx, key, version));
  }

  private boolean deleteIfExpired(StoreTransaction tx, RecordKey key, Instant now) {
    return timed("delete", () -> store.deleteIfExpired(tx, key, now));
  }

  /**
   * Deletes a record whose lease expired before its first phase committed (version-conditional): nothing of it was
   * committed (the first phase is transactional), and the completer cannot run that phase without the request. The
   * key is free for the client's retry.
   */
  public boolean releaseUnstarted(IdempotencyRecord expired) {
    boolean deleted = transaction(tx -> delete(tx, expired.key(), expired.version()));
    if (deleted) {
      listener.onLeaseExpired(name, expired);
      listener.onTransition(name, expired.key(), RecordState.IN_PROGRESS, null, null);
    }
    return deleted;
  }

  /**
   * Applies a reconciler's verdict on an uncertain record, conditional on the version read: through the store's
   * {@code admin().resolve}, so that the decision is audited (actor {@code reconciler '<instance>'}). Returns whether
   * it took effect (false when another worker decided the record first).
   */
  public boolean applyVerdict(IdempotencyRecord record, Reconciler.Verdict verdict) {
    Instant now = clock.instant();
    String actor = "reconciler '" + name + "'";
    Resolution resolution = switch (verdict.result()) {
      case COMPLETED -> Resolution.complete(verdict.response(), actor,
          "the other system reports the effect completed", now);
      case FAILED -> Resolution.fail(verdict.response(), actor, "the other system reports the effect failed", now);
      case RESUME -> Resolution.retry(actor, "the other system knows the call: resumed from the recovery point", now);
      case UNKNOWN -> throw new IllegalArgumentException("an UNKNOWN verdict decides nothing");
    };
    Optional<AuditEntry> entry = store.admin().resolve(record.key(), record.version(), resolution);
    entry.ifPresent(e -> listener.onTransition(name, e.key(), e.from(), e.to(), null));
    return entry.isPresent();
  }

  /**
   * An operator's resolution of the uncertain record of {@code key}, at its current version, audited by the store.
   * Empty when the record is absent, not uncertain, or changed between the read and the write.
   */
  public Optional<AuditEntry> resolve(RecordKey key, Resolution resolution) {
    Optional<IdempotencyRecord> current = findCommitted(key);
    if (current.isEmpty() || current.get().state() != RecordState.UNCERTAIN) {
      return Optional.empty();
    }
    return resolve(key, current.get().version(), resolution);
  }

  /** As {@link #resolve(RecordKey, Resolution)}, at the version the operator saw. */
  public Optional<AuditEntry> resolve(RecordKey key, long version, Resolution resolution) {
    Optional<AuditEntry> entry = store.admin().resolve(key, version, resolution);
    entry.ifPresent(e -> {
      listener.onTransition(name, key, e.from(), e.to(), null);
      listener.onResolved(name, e);
    });
    return entry;
  }

  /** Takes over a record whose lease expired (used by the completer). Returns the held record or null. */
  public IdempotencyRecord takeOver(IdempotencyRecord expired, OperationPolicy policy) {
    Instant now = clock.instant();
    if (!expired.isLeaseExpired(now)) {
      return null;
    }
    IdempotencyRecord taken = expired.withLease(owner, now.plus(policy.lease()), now);
    if (transaction(tx -> updateLast(tx, taken))) {
      listener.onLeaseExpired(name, expired);
      return taken;
    }
    return null;
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /** What a phase sees. */
  private static final class Context implements PhaseContext {
    private final RecordKey key;
    private final IdempotencyRecord held;
    private final Checkpoint checkpoint;
    private final IdempotentRequest request;
    private final boolean resumed;
    private final StoreTransaction tx;
    /** Whether this context writes the outcome of an outside phase, whose call has taken effect. */
    private boolean outside;

    Context afterOutsideCall() {
      this.outside = true;
      return this;
    }

    Context(RecordKey key, IdempotencyRecord held, Checkpoint checkpoint, IdempotentRequest request,
        boolean resumed, StoreTransaction tx) {
      this.key = key;
      this.held = held;
      this.checkpoint = checkpoint;
      this.request = request;
      this.resumed = resumed;
      this.tx = tx;
    }

    @Override
    public RecordKey recordKey() {
      return key;
    }

    @Override
    public String derivedKey(String name) {
      return held.derive(name);
    }

    @Override
    public Checkpoint checkpoint() {
      return checkpoint;
    }

    @Override
    public Optional<IdempotentRequest> request() {
      return Optional.ofNullable(request);
    }

    @Override
    public boolean resumed() {
      return resumed;
    }

    @Override
    public StoreTransaction transaction() {
      if (tx == null) {
        throw new IllegalStateException("this phase runs outside any transaction (declared with outside(...))");
      }
      return tx;
    }
  }
}
