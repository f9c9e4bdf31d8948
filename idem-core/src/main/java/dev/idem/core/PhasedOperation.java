package dev.idem.core;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * An operation run in named phases, for work that calls outside the database. Immutable and thread-safe.
 *
 * <p>The first phase runs in a transaction and puts into the checkpoint what the later phases need: until it commits,
 * a failure simply frees the key, and after it, a retry or the completer resumes from the checkpoint alone. Each
 * phase is its own unit: a phase declared {@link Builder#inTransaction inTransaction} runs in a store
 * transaction that also moves the recovery point; a phase declared {@link Builder#outside outside} runs with no
 * transaction open (an external call, such as a payment provider), and its result is then committed as the new
 * recovery point in a short transaction. A crash between an external call and that commit re-runs the call on
 * resume, so external calls must carry a key derived from the record ({@code ctx.derivedKey("charge")}) to a
 * system that is idempotent on it.
 *
 * <p>A phase whose other system refuses the call for good returns {@link PhaseResult#refuse}: the record ends FAILED
 * with that answer, after the operation's {@link Builder#onRefusal release step} gave back what the committed phases
 * reserved (a payment marked failed, a refund's reserved amount returned).
 *
 * <pre>{@code
 * PhasedOperation payments = PhasedOperation.builder("POST /payments")
 *     .inTransaction("create", ctx -> PhaseResult.next(createPending(ctx)))
 *     .outside("charge", ctx -> PhaseResult.next(charge(ctx.derivedKey("charge"), ctx.checkpoint())))
 *     .inTransaction("capture", ctx -> PhaseResult.respond(capture(ctx)))
 *     .build();
 * }</pre>
 */
public final class PhasedOperation {

  /**
   * One phase: whether it runs inside a transaction, and, for an outside phase, whether it is repeatable (its
   * checkpoint commits with the next phase's transaction).
   */
  public record Step(String name, boolean transactional, boolean repeatable, Phase phase) {}

  /**
   * What runs when a phase after the first refuses ({@link PhaseResult#refuse}): it gives back what the committed
   * phases reserved. It runs in the transaction that ends the record FAILED ({@link PhaseContext#transaction()} is
   * open), and sees the checkpoint the refusing phase saw. If it throws, that transaction rolls back and the record
   * stays at its recovery point, as after any failed phase.
   */
  @FunctionalInterface
  public interface Release {
    void run(PhaseContext context) throws Exception;
  }

  private static final Release NOTHING = context -> {};

  private final Operation operation;
  private final List<Step> steps;
  private final Release release;
  private final Reconciler reconciler;

  private PhasedOperation(Operation operation, List<Step> steps, Release release, Reconciler reconciler) {
    this.operation = operation;
    this.steps = List.copyOf(steps);
    this.release = release;
    this.reconciler = reconciler;
  }

  public static Builder builder(String operation) {
    return new Builder(Operation.of(operation));
  }

  public static Builder builder(Operation operation) {
    return new Builder(operation);
  }

  public Operation operation() {
    return operation;
  }

  public List<Step> steps() {
    return steps;
  }

  /** The release step run on a refusal; one that does nothing when none was given. */
  public Release release() {
    return release;
  }

  /**
   * The reconciler that decides this operation's {@link RecordState#UNCERTAIN uncertain} records, if one was given;
   * without one they wait for an operator.
   */
  public Optional<Reconciler> reconciler() {
    return Optional.ofNullable(reconciler);
  }

  /** The index of the first phase to run after {@code recoveryPoint} ({@code null}: from the start). */
  public int indexAfter(String recoveryPoint) {
    if (recoveryPoint == null) {
      return 0;
    }
    for (int i = 0; i < steps.size(); i++) {
      if (steps.get(i).name().equals(recoveryPoint)) {
        return i + 1;
      }
    }
    throw new ConfigurationException("operation " + operation + " has no phase '" + recoveryPoint
        + "' (a stored recovery point); phases are " + names() + ". Keep old phase names while records use them.");
  }

  public List<String> names() {
    List<String> names = new ArrayList<>();
    steps.forEach(s -> names.add(s.name()));
    return names;
  }

  /** Mutable, not thread-safe. */
  public static final class Builder {
    private final Operation operation;
    private final List<Step> steps = new ArrayList<>();
    private final Set<String> names = new HashSet<>();
    private Release release = NOTHING;
    private Reconciler reconciler;

    private Builder(Operation operation) {
      this.operation = Objects.requireNonNull(operation, "operation");
    }

    /** A phase that runs inside a store transaction, committed together with the new recovery point. */
    public Builder inTransaction(String name, Phase phase) {
      return add(name, true, false, phase);
    }

    /**
     * A phase that runs with no transaction open, typically one external call with a derived key. Its result is
     * committed as the new recovery point in a short transaction of its own before the next phase runs.
     */
    public Builder outside(String name, Phase phase) {
      return add(name, false, false, phase);
    }

    /**
     * An outside phase whose call is safe to repeat: it sends {@code ctx.derivedKey(...)} to a system that applies
     * each key once and answers a repeat with the original result. Its checkpoint is not committed on its own; the
     * next phase (when that one runs in a transaction) sees it and commits it with its own writes, which saves a
     * commit per request. The price: a crash, or a failure of the next phase, runs this call again on resume (the
     * other system answers with what it did the first time). The fencing of the record is unchanged.
     */
    public Builder outsideRepeatable(String name, Phase phase) {
      return add(name, false, true, phase);
    }

    /**
     * The step that gives back what the committed phases reserved when a later phase refuses for good
     * ({@link PhaseResult#refuse}); runs in the transaction that ends the record FAILED. By default nothing runs.
     */
    public Builder onRefusal(Release release) {
      this.release = Objects.requireNonNull(release, "release");
      return this;
    }

    /**
     * The reconciler that asks the other system what became of this operation's uncertain records (those whose
     * resumptions kept failing past {@link OperationPolicy#resumeCapAttempts() the cap}). Without one, they wait for
     * an operator.
     */
    public Builder reconciler(Reconciler reconciler) {
      this.reconciler = Objects.requireNonNull(reconciler, "reconciler");
      return this;
    }

    private Builder add(String name, boolean transactional, boolean repeatable, Phase phase) {
      Objects.requireNonNull(phase, "phase");
      if (name == null || name.isBlank() || name.length() > 64) {
        throw new IllegalArgumentException("phase name must be 1 to 64 characters, got '" + name + "'");
      }
      if (!names.add(name)) {
        throw new IllegalArgumentException("phase name '" + name + "' is used twice in " + operation);
      }
      steps.add(new Step(name, transactional, repeatable, phase));
      return this;
    }

    public PhasedOperation build() {
      if (steps.isEmpty()) {
        throw new IllegalArgumentException("phased operation " + operation + " needs at least one phase");
      }
      if (!steps.get(0).transactional()) {
        throw new IllegalArgumentException("the first phase of " + operation + " ('" + steps.get(0).name()
            + "') must run inTransaction: it records in the checkpoint what later phases need, so that a retry or"
            + " the completer can resume after it; an external call before it could not be resumed");
      }
      return new PhasedOperation(operation, steps, release, reconciler);
    }
  }
}
