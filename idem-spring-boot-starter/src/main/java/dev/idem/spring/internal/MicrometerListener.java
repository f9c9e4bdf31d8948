package dev.idem.spring.internal;

import dev.idem.core.AuditEntry;
import dev.idem.core.Execution;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Reconciler;
import dev.idem.core.RecordKey;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.spi.IdemListener;
import dev.idem.servlet.IdempotentRoute;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Idem's meters (docs/OPERATIONS.md), as an {@link IdemListener}. Tags are the instance name, the operation and a small
 * fixed set of outcomes; never the key or the scope, whose cardinality is unbounded. Thread-safe.
 *
 * <ul>
 *   <li>{@code idem.requests} (counter): instance, operation, outcome = created, replayed, mismatch, in_progress,
 *       released
 *   <li>{@code idem.request.duration} (timer): the same tags
 *   <li>{@code idem.replay.key.age} (distribution, seconds, with a histogram): how old a key is when it replays;
 *       instance, operation
 *   <li>{@code idem.lease.expired} (counter): instance, operation; and {@code idem.completer.recoveries} (counter):
 *       instance, operation, result = recovered, failed
 *   <li>{@code idem.records.uncertain} (counter): instance, operation: records that became uncertain (their resume
 *       cap was hit); {@code idem.reconcile} (counter): instance, operation, result = completed, failed, resumed,
 *       unknown, skipped (another node decided first), error (the reconciler threw); {@code idem.resolutions}
 *       (counter): instance, operation, action = complete, fail, retry: operators' resolutions
 *   <li>{@code idem.store.latency} (timer): instance, store (the store's name), call (a short fixed name such as
 *       {@code find} or {@code insert}), success
 * </ul>
 *
 * <p>Counters are registered with their first event, or at zero beforehand for the operations known at startup
 * ({@link #registerOperation}), so that a query or an alert on them sees 0 rather than no data. The gauges of records
 * in progress are {@link InProgressGauges}.
 */
public final class MicrometerListener implements IdemListener {
  private final MeterRegistry registry;
  private final String instance;

  /**
   * Meters on {@code registry}.
   *
   * @param instance the {@code instance} tag of the store latency, whose events name only the store: the name of
   *     the Idem instance this listener serves
   */
  public MicrometerListener(MeterRegistry registry, String instance) {
    this.registry = registry;
    this.instance = instance;
  }

  /**
   * Registers at zero the counters of {@code operation} of the Idem instance {@code instance}, for an operation known
   * before its first request: {@code idem.requests} for every outcome; {@code idem.lease.expired} when its records
   * hold a lease ({@code PHASED} and {@code LEASED} routes); {@code idem.completer.recoveries}, recovered and failed,
   * when the completer resumes them ({@code PHASED}). Registering again changes nothing.
   */
  public void registerOperation(String instance, String operation, IdempotentRoute.Mode mode) {
    for (Execution.Outcome outcome : Execution.Outcome.values()) {
      requests(instance, operation, OutcomeNames.of(outcome));
    }
    if (mode != IdempotentRoute.Mode.ATOMIC) {
      leaseExpired(instance, operation);
    }
    if (mode == IdempotentRoute.Mode.PHASED) {
      recoveries(instance, operation, true);
      recoveries(instance, operation, false);
      uncertain(instance, operation);
    }
  }

  private Counter uncertain(String instance, String operation) {
    return Counter.builder("idem.records.uncertain")
        .description("Records that became uncertain: their resumptions failed past the operation's resume cap")
        .tags("instance", instance, "operation", operation).register(registry);
  }

  private Counter reconcile(String instance, String operation, String result) {
    return Counter.builder("idem.reconcile").description("Reconcilers' answers about uncertain records")
        .tags("instance", instance, "operation", operation, "result", result).register(registry);
  }

  private Counter resolutions(String instance, String operation, String action) {
    return Counter.builder("idem.resolutions").description("Operators' resolutions of uncertain records")
        .tags("instance", instance, "operation", operation, "action", action).register(registry);
  }

  private Counter requests(String instance, String operation, String outcome) {
    return Counter.builder("idem.requests").description("Idempotent requests by outcome")
        .tags("instance", instance, "operation", operation, "outcome", outcome).register(registry);
  }

  private Counter leaseExpired(String instance, String operation) {
    return Counter.builder("idem.lease.expired")
        .description("In-progress records taken over after their lease expired")
        .tags("instance", instance, "operation", operation).register(registry);
  }

  private Counter recoveries(String instance, String operation, boolean recovered) {
    return Counter.builder("idem.completer.recoveries").description("Records the completer resumed")
        .tags("instance", instance, "operation", operation, "result", recovered ? "recovered" : "failed")
        .register(registry);
  }

  /** Counts the outcome and times the execution; records the key age of a replay. */
  @Override
  public void onExecution(String instance, Execution execution, Duration elapsed) {
    String operation = execution.key().operation().name();
    String outcome = OutcomeNames.of(execution.outcome());
    requests(instance, operation, outcome).increment();
    Timer.builder("idem.request.duration").description("Time the executor took, including the work")
        .tags("instance", instance, "operation", operation, "outcome", outcome).register(registry)
        .record(elapsed.toNanos(), TimeUnit.NANOSECONDS);
    if (execution.outcome() == Execution.Outcome.REPLAYED && execution.keyAge() != null) {
      DistributionSummary.builder("idem.replay.key.age").baseUnit("seconds")
          .description("Age of a key when its answer was replayed").publishPercentileHistogram()
          .tags("instance", instance, "operation", operation).register(registry)
          .record(execution.keyAge().toMillis() / 1000.0);
    }
  }

  /** An exception released the key (a not-kept answer is counted by {@link #onExecution}). */
  @Override
  public void onReleased(String instance, RecordKey key, Throwable cause) {
    if (cause == null) {
      return;
    }
    requests(instance, key.operation().name(), OutcomeNames.of(Execution.Outcome.NOT_STORED)).increment();
  }

  /** Counts the takeover. */
  @Override
  public void onLeaseExpired(String instance, IdempotencyRecord expired) {
    leaseExpired(instance, expired.key().operation().name()).increment();
  }

  /** Counts the completer's round on the record, recovered or failed. */
  @Override
  public void onCompleterRecovery(String instance, RecordKey key, boolean recovered, Throwable failure) {
    recoveries(instance, key.operation().name(), recovered).increment();
  }

  /** Counts the record that became uncertain. */
  @Override
  public void onUncertain(String instance, IdempotencyRecord record, Throwable cause) {
    uncertain(instance, record.key().operation().name()).increment();
  }

  /** Counts the reconciler's answer. */
  @Override
  public void onReconciled(String instance, RecordKey key, Reconciler.Verdict.Result result, boolean applied,
      Throwable failure) {
    String name = failure != null ? "error"
        : !applied && result != Reconciler.Verdict.Result.UNKNOWN ? "skipped"
        : result == Reconciler.Verdict.Result.RESUME ? "resumed" : result.name().toLowerCase(Locale.ROOT);
    reconcile(instance, key.operation().name(), name).increment();
  }

  /** Counts the operator's resolution. */
  @Override
  public void onResolved(String instance, AuditEntry entry) {
    resolutions(instance, entry.key().operation().name(), entry.action().name().toLowerCase(Locale.ROOT)).increment();
  }

  /** Counts a kept answer that could not be opened, by store and reason; alert on any. */
  @Override
  public void onRecordUnreadable(String store, RecordKey key, DecryptionException failure) {
    Counter.builder("idem.records.unreadable")
        .description("Kept answers that could not be opened (tampered with, or under an unknown key)")
        .tags("instance", instance, "store", store, "reason", failure.reason().name().toLowerCase(Locale.ROOT))
        .register(registry).increment();
  }

  /** Times the store call. */
  @Override
  public void onStoreCall(String store, String call, long nanos, boolean success) {
    Timer.builder("idem.store.latency").description("Latency of idempotency store calls")
        .tags("instance", instance, "store", store, "call", call, "success", Boolean.toString(success))
        .register(registry)
        .record(nanos, TimeUnit.NANOSECONDS);
  }
}
