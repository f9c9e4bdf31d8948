package dev.idem.core;

import dev.idem.core.internal.Executor;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Drives in-progress records whose lease expired to a final state: each resumes from its recovery point with the
 * phases registered for its operation. Thread-safe.
 *
 * <p>A completer sees only the phased operations registered with its {@code Idem}: records of other operations
 * (leased mode, or another service sharing the table) are never touched; a leased record is taken over by the next
 * retry of its key. Several completers may run at once, on one node or many: a takeover is an update conditional on
 * the version read, so exactly one of them wins each record and the others skip it. Each {@link #runOnce()} handles
 * at most {@code batchSize} records. A record whose resumption fails is left under a fresh lease (one lease
 * duration), so that the records behind it get their turn before it is tried again.
 */
public final class Completer implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(Completer.class.getName());

  /**
   * What one round did: records found with an expired lease, recovered to a final state, released (their worker died
   * before the first phase committed, so nothing is left to finish and the key is free), failed (left for a later
   * round), and skipped (another worker took them first).
   */
  public record Round(int found, int recovered, int released, int failed, int skipped) {}

  /**
   * What one reconciliation round did: uncertain records found (of operations with a {@link Reconciler}), decided
   * completed or failed, sent back to work (resumed), left uncertain (the reconciler could not tell, or threw), and
   * skipped (another worker decided them first).
   */
  public record Reconciliation(int found, int completed, int failed, int resumed, int unknown, int skipped) {}

  private final Executor executor;
  private final int batchSize;
  private final Duration interval;
  private final AtomicLong rounds = new AtomicLong();
  private final AtomicLong recoveredTotal = new AtomicLong();
  private final AtomicLong failedTotal = new AtomicLong();
  private final AtomicReference<RecordKey> reconcileAfter = new AtomicReference<>();
  private ScheduledExecutorService scheduler;
  private ScheduledFuture<?> task;

  private Completer(Builder b) {
    this.executor = b.executor;
    this.batchSize = b.batchSize;
    this.interval = b.interval;
  }

  static Builder builder(Executor executor) {
    return new Builder(executor);
  }

  /** Runs one bounded round now, on the calling thread. */
  public Round runOnce() {
    List<IdempotencyRecord> expired = executor.store()
        .findLeaseExpired(executor.clock().instant(), executor.phasedOperations(), batchSize);
    int recovered = 0;
    int released = 0;
    int failed = 0;
    int skipped = 0;
    for (IdempotencyRecord record : expired) {
      Optional<PhasedOperation> operation = executor.phasedOperation(record.key().operation());
      try {
        if (operation.isEmpty()) {
          skipped++;
          continue;
        }
        if (record.recoveryPoint() == null) {
          if (executor.releaseUnstarted(record)) {
            released++;
          } else {
            skipped++;
          }
          continue;
        }
        OperationPolicy policy = executor.policy(record.key().operation());
        IdempotencyRecord held = executor.takeOver(record, policy);
        if (held == null) {
          skipped++;
          continue;
        }
        Execution e = executor.runPhases(operation.get(), held, null, true, policy, policy.lease());
        boolean finished = e.outcome() == Execution.Outcome.STORED;
        if (finished) {
          recovered++;
        } else {
          failed++;
        }
        executor.listener().onCompleterRecovery(executor.name(), record.key(), finished, null);
      } catch (LeaseLostException e) {
        skipped++;
      } catch (RuntimeException e) {
        failed++;
        LOG.log(System.Logger.Level.WARNING, "completer '" + executor.name() + "': resuming " + record.key()
            + " from '" + record.recoveryPoint() + "' failed; it waits for the next round", e);
        executor.listener().onCompleterRecovery(executor.name(), record.key(), false, e);
      }
    }
    rounds.incrementAndGet();
    recoveredTotal.addAndGet(recovered);
    failedTotal.addAndGet(failed);
    return new Round(expired.size(), recovered, released, failed, skipped);
  }

  /**
   * Runs one bounded reconciliation round now, on the calling thread: asks the {@link Reconciler} of each phased
   * operation that has one about up to {@code batchSize} of its {@link RecordState#UNCERTAIN uncertain} records, and
   * applies each decision as a version-checked, audited resolution, so that of two nodes reconciling the same record
   * exactly one decides it. Rounds walk the uncertain records by key and start over after the last, so that records
   * the other system cannot tell about yet do not starve the ones behind them.
   */
  public Reconciliation reconcileOnce() {
    List<Operation> operations = executor.reconciledOperations();
    if (operations.isEmpty()) {
      return new Reconciliation(0, 0, 0, 0, 0, 0);
    }
    RecordKey after = reconcileAfter.get();
    List<IdempotencyRecord> uncertain = executor.store().findUncertain(operations, after, batchSize);
    reconcileAfter.compareAndSet(after,
        uncertain.size() < batchSize ? null : uncertain.get(uncertain.size() - 1).key());
    int completed = 0;
    int failed = 0;
    int resumed = 0;
    int unknown = 0;
    int skipped = 0;
    for (IdempotencyRecord record : uncertain) {
      Reconciler reconciler = executor.phasedOperation(record.key().operation())
          .flatMap(PhasedOperation::reconciler).orElseThrow();
      Reconciler.Verdict verdict;
      try {
        verdict = Objects.requireNonNull(reconciler.reconcile(record), "the reconciler's verdict");
        if (verdict.result() == Reconciler.Verdict.Result.UNKNOWN) {
          unknown++;
          executor.listener().onReconciled(executor.name(), record.key(), verdict.result(), false, null);
          continue;
        }
        boolean applied = executor.applyVerdict(record, verdict);
        if (!applied) {
          skipped++;
        } else if (verdict.result() == Reconciler.Verdict.Result.COMPLETED) {
          completed++;
        } else if (verdict.result() == Reconciler.Verdict.Result.RESUME) {
          resumed++;
        } else {
          failed++;
        }
        executor.listener().onReconciled(executor.name(), record.key(), verdict.result(), applied, null);
      } catch (Exception e) {
        unknown++;
        LOG.log(System.Logger.Level.WARNING, "completer '" + executor.name() + "': reconciling " + record.key()
            + " failed; it stays uncertain until the next round", e);
        executor.listener().onReconciled(executor.name(), record.key(), Reconciler.Verdict.Result.UNKNOWN, false, e);
      }
    }
    return new Reconciliation(uncertain.size(), completed, failed, resumed, unknown, skipped);
  }

  /**
   * Runs rounds every {@code interval} on a daemon thread until {@link #close()}: completer rounds until no more
   * expired leases are found, then one reconciliation round (whose resumed records the next round's completer
   * finishes).
   */
  public synchronized Completer start() {
    if (scheduler != null) {
      throw new IllegalStateException("completer '" + executor.name() + "' is already running");
    }
    scheduler = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "idem-completer-" + executor.name());
      t.setDaemon(true);
      return t;
    });
    task = scheduler.scheduleWithFixedDelay(() -> {
      try {
        Round round;
        do {
          round = runOnce();
        } while (round.found() == batchSize && round.recovered() + round.released() > 0);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "completer '" + executor.name() + "': round failed", e);
      }
      try {
        reconcileOnce();
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "completer '" + executor.name() + "': reconciliation round failed", e);
      }
    }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS);
    return this;
  }

  public long rounds() {
    return rounds.get();
  }

  public long recoveredTotal() {
    return recoveredTotal.get();
  }

  public long failedTotal() {
    return failedTotal.get();
  }

  @Override
  public synchronized void close() {
    if (scheduler != null) {
      task.cancel(false);
      scheduler.shutdown();
      try {
        scheduler.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      scheduler = null;
    }
  }

  /** Mutable, not thread-safe. */
  public static final class Builder {
    private final Executor executor;
    private int batchSize = 100;
    private Duration interval = Duration.ofSeconds(5);

    private Builder(Executor executor) {
      this.executor = Objects.requireNonNull(executor);
    }

    /** Records handled per round (default 100). */
    public Builder batchSize(int batchSize) {
      if (batchSize < 1 || batchSize > 10_000) {
        throw new IllegalArgumentException("batchSize must be 1..10000, got " + batchSize);
      }
      this.batchSize = batchSize;
      return this;
    }

    /** Pause between rounds when started (default 5 s). */
    public Builder interval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      if (interval.toMillis() < 1) {
        throw new IllegalArgumentException("interval must be at least 1 ms, got " + interval);
      }
      this.interval = interval;
      return this;
    }

    public Completer build() {
      return new Completer(this);
    }
  }
}
