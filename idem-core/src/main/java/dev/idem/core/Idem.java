package dev.idem.core;

import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.internal.Executor;
import dev.idem.core.spi.IdemListener;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.Sleeper;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The executor: decides, for every (scope, operation, key), whether a request executes, replays or is refused,
 * and runs it in one of three modes. Thread-safe; build one per store and share it.
 *
 * <ul>
 *   <li>{@link #atomic}: the record is written in the same store transaction as the work. A crash leaves nothing.
 *   <li>{@link #phased}: a registered {@link PhasedOperation}, one transaction per phase, resumable by a retry or
 *       by the {@link Completer}.
 *   <li>{@link #leased}: claim with a lease, run, complete. For stores without transactions; weaker: a worker that
 *       outlives its lease may repeat the effect (its write is still fenced out).
 * </ul>
 *
 * <pre>{@code
 * Idem idem = Idem.builder().name("payments").store(store).build();
 * Execution e = idem.atomic(request, tx -> {
 *   insertPayment(tx.unwrap(Connection.class));
 *   return StoredResponse.json(201, "{\"id\":\"pay_1\"}");
 * });
 * }</pre>
 */
public final class Idem {
  private final Executor executor;
  private final String name;

  private Idem(Builder b) {
    this.name = b.name;
    IdemListener listener = b.listener();
    IdempotencyStore store = b.encryption == null ? b.store
        : EncryptedIdempotencyStore.wrap(b.store, b.encryption, listener, b.sealFieldHashes);
    this.executor = new Executor(b.name, store, b.clock, b.sleeper, listener, b.defaultPolicy,
        Map.copyOf(b.policies), Map.copyOf(b.phased));
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The instance name, which appears in log lines, meter tags and messages. */
  public String name() {
    return name;
  }

  /** Runs the work in one store transaction with the claim and the completion. */
  public Execution atomic(IdempotentRequest request, AtomicWork work) {
    return executor.atomic(request, work);
  }

  /** Runs (or resumes) the phased operation registered for the request's operation. */
  public Execution phased(IdempotentRequest request) {
    return executor.phased(request);
  }

  /** Claims the key with a lease, runs the work outside any transaction, then completes the record. */
  public Execution leased(IdempotentRequest request, LeasedWork work) {
    return executor.leased(request, work);
  }

  /**
   * An idempotent call of any unit of work under {@code key}: its return value is kept and a duplicate gets it back
   * (see {@link IdempotentCall}).
   */
  public IdempotentCall call(RecordKey key) {
    return IdempotentCall.of(this, key);
  }

  /** The policy in force for an operation. */
  public OperationPolicy policy(Operation operation) {
    return executor.policy(operation);
  }

  /** A completer for this instance's phased operations; see {@link Completer}. */
  public Completer.Builder completer() {
    return Completer.builder(executor);
  }

  /**
   * An operator's decision about the {@link RecordState#UNCERTAIN uncertain} record of {@code key}: complete it or
   * fail it with a given answer, or send it back to work ({@link Resolution}). Applied at the record's current
   * version through the store's {@code admin().resolve}, which audits it; listeners hear of it
   * ({@link IdemListener#onResolved}).
   *
   * @return the audit entry, or empty when the record is absent, not uncertain, or changed meanwhile
   */
  public Optional<AuditEntry> resolve(RecordKey key, Resolution resolution) {
    return executor.resolve(Objects.requireNonNull(key, "key"), Objects.requireNonNull(resolution, "resolution"));
  }

  /**
   * As {@link #resolve(RecordKey, Resolution)}, only if the record is still at {@code version}, the one the operator
   * decided on: a record that moved on since is left alone.
   */
  public Optional<AuditEntry> resolve(RecordKey key, long version, Resolution resolution) {
    return executor.resolve(Objects.requireNonNull(key, "key"), version,
        Objects.requireNonNull(resolution, "resolution"));
  }

  /** The audit of {@code key}'s resolutions, oldest first ({@code admin().history}). */
  public List<AuditEntry> history(RecordKey key) {
    return executor.store().admin().history(key);
  }

  public IdempotencyStore store() {
    return executor.store();
  }

  /** Mutable, not thread-safe. {@link #store} is required; everything else has a default. */
  public static final class Builder {
    private String name = "default";
    private IdempotencyStore store;
    private Encryption encryption;
    private boolean sealFieldHashes = true;
    private Clock clock = Clock.systemUTC();
    private Sleeper sleeper = Sleeper.SYSTEM;
    private final List<IdemListener> listeners = new ArrayList<>();
    private OperationPolicy defaultPolicy = OperationPolicy.ofDefaults();
    private final Map<Operation, OperationPolicy> policies = new HashMap<>();
    private final Map<Operation, PhasedOperation> phased = new HashMap<>();

    private Builder() {}

    public Builder name(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank() || name.length() > 64) {
        throw new IllegalArgumentException("name must be 1 to 64 characters, got '" + name + "'");
      }
      this.name = name;
      return this;
    }

    public Builder store(IdempotencyStore store) {
      this.store = Objects.requireNonNull(store, "store");
      return this;
    }

    /**
     * Seals every kept answer (headers and body), the fingerprint's per-field hashes and the checkpoints under
     * {@code encryption} before they reach the store, and opens them on the way back (see
     * {@link EncryptedIdempotencyStore}); {@link Idem#store()} is then the sealing store. Off by default.
     */
    public Builder encryption(Encryption encryption) {
      this.encryption = Objects.requireNonNull(encryption, "encryption");
      return this;
    }

    /**
     * With {@link #encryption}: whether the fingerprints' per-field hashes are sealed too (default true). Turn it off
     * only during a rolling upgrade from a version that sealed answers but not field hashes, whose nodes cannot open
     * an answer sealed with them; turn it on again once every node runs this version. Both forms are read either way.
     */
    public Builder sealFieldHashes(boolean seal) {
      this.sealFieldHashes = seal;
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    public Builder sleeper(Sleeper sleeper) {
      this.sleeper = Objects.requireNonNull(sleeper, "sleeper");
      return this;
    }

    /** Adds a listener; several may be added, called in order. */
    public Builder listener(IdemListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /** The policy for operations without their own. */
    public Builder defaultPolicy(OperationPolicy policy) {
      this.defaultPolicy = Objects.requireNonNull(policy, "policy");
      return this;
    }

    public Builder policy(String operation, OperationPolicy policy) {
      return policy(Operation.of(operation), policy);
    }

    public Builder policy(Operation operation, OperationPolicy policy) {
      policies.put(Objects.requireNonNull(operation, "operation"), Objects.requireNonNull(policy, "policy"));
      return this;
    }

    /** Registers a phased operation, so that {@link Idem#phased} and the completer can run it. */
    public Builder phased(PhasedOperation operation) {
      Objects.requireNonNull(operation, "operation");
      if (phased.putIfAbsent(operation.operation(), operation) != null) {
        throw new IllegalArgumentException("phased operation " + operation.operation() + " is registered twice");
      }
      return this;
    }

    public Idem build() {
      if (store == null) {
        throw new ConfigurationException("Idem '" + name + "': a store is required (Idem.builder().store(...))");
      }
      return new Idem(this);
    }

    private IdemListener listener() {
      if (listeners.isEmpty()) {
        return IdemListener.NOOP;
      }
      return dev.idem.core.internal.Listeners.compose(List.copyOf(listeners));
    }
  }
}
