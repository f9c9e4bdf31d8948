package dev.idem.spring.retry;

import dev.idem.retry.CircuitBreaker;
import dev.idem.retry.CircuitOpenException;
import dev.idem.retry.Retry;
import dev.idem.retry.RetryAbortedException;
import dev.idem.retry.RetryBudgetExhaustedException;
import dev.idem.retry.RetryDeadlineExceededException;
import dev.idem.retry.RetryExhaustedException;
import dev.idem.retry.spi.RetryListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Meters of {@link Retry} executions and {@link CircuitBreaker} states (docs/OPERATIONS.md: retries by cause, budget
 * refusals, circuit state), as a {@link RetryListener}: give it to {@link Retry#withListener}, and
 * {@link #bind(CircuitBreaker)} each breaker. Every meter is tagged {@code instance} (the Idem instance,
 * {@code idem.name}) and {@code retry} (the {@link Retry#name()}) or {@code circuit} (the breaker's name):
 *
 * <ul>
 *   <li>{@code idem.retry.attempts} (counter): attempts started, first attempts included
 *   <li>{@code idem.retry.hedges} (counter): hedged copies of an attempt started ({@link Retry#withHedging})
 *   <li>{@code idem.retry.retries} (counter), tag {@code cause}: retries scheduled after a failed attempt; the cause
 *       is the simple class name of the attempt's exception, or {@code result} when the attempt returned a result
 *       the policy retries (a 503, say). At most {@value #MAX_CAUSES} distinct causes are kept per instance of this
 *       class; later ones count as {@code other}
 *   <li>{@code idem.retry.budget.refused} (counter): retries (and hedges) the retry budget refused
 *   <li>{@code idem.retry.circuit.refused} (counter): attempts the circuit breaker refused (the operation was not
 *       called)
 *   <li>{@code idem.retry.outcome} (counter), tags {@code outcome} = {@code success} or {@code failure} and
 *       {@code reason}: for a success {@code first_attempt} or {@code retried}; for a failure {@code exhausted},
 *       {@code deadline}, {@code budget}, {@code circuit_open}, {@code not_retryable} (a failure the policy does not
 *       retry ended the call) or {@code interrupted}
 *   <li>{@code idem.circuit.state} (gauge): 0 closed, 1 half-open, 2 open
 * </ul>
 *
 * <p>No tag holds a key, a URL or a message. Retry names are chosen by the application; should it make them up at
 * run time, only the first {@value #MAX_NAMES} are kept and later ones count as {@code other}. Thread-safe; the
 * counters of a retry are registered on its first event (its first attempt), all at once at zero except the retries
 * by cause, whose causes are only known when they happen: from then on a query or an alert on a retry's outcome sees 0
 * rather than no data. An attempt that succeeds allocates nothing here.
 */
public final class RetryMeters implements RetryListener {
  /** Attempts started. */
  public static final String ATTEMPTS = "idem.retry.attempts";
  /** Hedged copies started. */
  public static final String HEDGES = "idem.retry.hedges";
  /** Retries scheduled, by cause. */
  public static final String RETRIES = "idem.retry.retries";
  /** Retries the budget refused. */
  public static final String BUDGET_REFUSED = "idem.retry.budget.refused";
  /** Attempts the circuit breaker refused. */
  public static final String CIRCUIT_REFUSED = "idem.retry.circuit.refused";
  /** Calls ended, by outcome and reason. */
  public static final String OUTCOME = "idem.retry.outcome";
  /** The state of a circuit breaker: 0 closed, 1 half-open, 2 open. */
  public static final String CIRCUIT_STATE = "idem.circuit.state";
  /** The {@code cause} of a retry after a result the policy retries. */
  public static final String RESULT_CAUSE = "result";
  /** The {@code cause} (or {@code retry} name) beyond the caps. */
  public static final String OTHER = "other";
  /** The most distinct {@code cause} values. */
  public static final int MAX_CAUSES = 32;
  /** The most distinct {@code retry} names. */
  public static final int MAX_NAMES = 64;

  private final MeterRegistry registry;
  private final String instance;
  private final ConcurrentMap<String, PerRetry> retries = new ConcurrentHashMap<>();
  private final Set<String> causes = ConcurrentHashMap.newKeySet();
  private final int maxCauses;

  /**
   * Meters on {@code registry}.
   *
   * @param instance the value of the {@code instance} tag: the application's Idem instance name
   */
  public RetryMeters(MeterRegistry registry, String instance) {
    this(registry, instance, MAX_CAUSES);
  }

  /** Meters that keep at most {@code maxCauses} distinct causes (tests use a small cap). */
  RetryMeters(MeterRegistry registry, String instance, int maxCauses) {
    this.registry = Objects.requireNonNull(registry, "registry");
    this.instance = Objects.requireNonNull(instance, "instance");
    if (maxCauses < 1) {
      throw new IllegalArgumentException("maxCauses must be positive, got " + maxCauses);
    }
    this.maxCauses = maxCauses;
  }

  /**
   * Registers {@value #CIRCUIT_STATE} for {@code breaker}, tagged {@code circuit} with its name; the gauge reads
   * {@link CircuitBreaker#state()} at each scrape and holds the breaker. One breaker per name: binding a second
   * breaker of the same name keeps the first one's gauge.
   *
   * @return {@code breaker}, for chaining
   */
  public CircuitBreaker bind(CircuitBreaker breaker) {
    Objects.requireNonNull(breaker, "breaker");
    Gauge.builder(CIRCUIT_STATE, breaker, b -> stateValue(b.state()))
        .description("Circuit breaker state: 0 closed, 1 half-open, 2 open").strongReference(true)
        .tags("instance", instance, "circuit", breaker.name()).register(registry);
    return breaker;
  }

  /** The gauge value of a state: 0 closed, 1 half-open, 2 open. */
  public static int stateValue(CircuitBreaker.State state) {
    switch (state) {
      case CLOSED:
        return 0;
      case HALF_OPEN:
        return 1;
      case OPEN:
        return 2;
      default:
        throw new IllegalArgumentException(String.valueOf(state));
    }
  }

  /** Counts an attempt. */
  @Override
  public void onAttempt(String name, int attempt) {
    of(name).attempts.increment();
  }

  /** Counts a hedge. */
  @Override
  public void onHedge(String name, int attempt) {
    of(name).hedges.increment();
  }

  /** Counts a retry under its cause. */
  @Override
  public void onRetryScheduled(String name, int attempt, Duration delay, Throwable cause) {
    PerRetry r = of(name);
    r.retries.computeIfAbsent(causeName(cause), c -> Counter.builder(RETRIES)
        .description("Retries scheduled after a failed attempt, by cause")
        .tags("instance", instance, "retry", r.name, "cause", c).register(registry)).increment();
  }

  /** Counts a success, on the first attempt or after retries. */
  @Override
  public void onSuccess(String name, int attempts, Object result) {
    PerRetry r = of(name);
    (attempts <= 1 ? r.successFirst : r.successRetried).increment();
  }

  /** Counts a failure under its reason. */
  @Override
  public void onFailure(String name, int attempts, Throwable failure) {
    PerRetry r = of(name);
    r.failures.computeIfAbsent(reason(failure), reason -> outcome(r.name, "failure", reason)).increment();
  }

  /** Counts a retry the budget refused. */
  @Override
  public void onBudgetRefused(String name, int attempt) {
    of(name).budgetRefused.increment();
  }

  /** Counts an attempt the breaker refused. */
  @Override
  public void onCircuitOpen(String name, int attempt) {
    of(name).circuitRefused.increment();
  }

  /** Every {@code reason} of a failure, as {@link #reason(Throwable)} names it. */
  static final List<String> FAILURE_REASONS =
      List.of("exhausted", "deadline", "budget", "circuit_open", "not_retryable", "interrupted");

  /** Why a call failed, as the {@code reason} tag. */
  static String reason(Throwable failure) {
    if (failure instanceof RetryExhaustedException) {
      return "exhausted";
    }
    if (failure instanceof RetryDeadlineExceededException) {
      return "deadline";
    }
    if (failure instanceof RetryBudgetExhaustedException) {
      return "budget";
    }
    if (failure instanceof CircuitOpenException) {
      return "circuit_open";
    }
    if (failure instanceof RetryAbortedException && failure.getCause() instanceof InterruptedException
        || failure instanceof InterruptedException) {
      return "interrupted";
    }
    return "not_retryable";
  }

  private String causeName(Throwable cause) {
    if (cause == null) {
      return RESULT_CAUSE;
    }
    String name = cause.getClass().getSimpleName();
    if (name.isEmpty()) {
      // anonymous and hidden classes: the binary name's last segment (Outer$1)
      String full = cause.getClass().getName();
      name = full.substring(full.lastIndexOf('.') + 1);
    }
    return admitted(causes, name, maxCauses);
  }

  /** {@code value} when it is known or there is room for it; {@value #OTHER} beyond {@code max} values. */
  private static String admitted(Set<String> seen, String value, int max) {
    if (seen.contains(value)) {
      return value;
    }
    synchronized (seen) {
      if (seen.size() < max) {
        seen.add(value);
        return value;
      }
    }
    return seen.contains(value) ? value : OTHER;
  }

  private PerRetry of(String name) {
    PerRetry r = retries.get(name);
    if (r != null) {
      return r;
    }
    if (retries.size() >= MAX_NAMES) {
      return retries.computeIfAbsent(OTHER, PerRetry::new);
    }
    return retries.computeIfAbsent(name, PerRetry::new);
  }

  private Counter outcome(String retry, String outcome, String reason) {
    return Counter.builder(OUTCOME).description("Retry executions ended, by outcome and reason")
        .tags("instance", instance, "retry", retry, "outcome", outcome, "reason", reason).register(registry);
  }

  @Override
  public String toString() {
    return "RetryMeters[" + instance + ", retries " + retries.keySet() + "]";
  }

  /** The meters of one retry name. */
  private final class PerRetry {
    final String name;
    final Counter attempts;
    final Counter hedges;
    final Counter budgetRefused;
    final Counter circuitRefused;
    final Counter successFirst;
    final Counter successRetried;
    final ConcurrentMap<String, Counter> retries = new ConcurrentHashMap<>();
    final ConcurrentMap<String, Counter> failures = new ConcurrentHashMap<>();

    PerRetry(String name) {
      this.name = name;
      attempts = counter(ATTEMPTS, "Attempts started, first attempts included");
      hedges = counter(HEDGES, "Hedged copies of an attempt started");
      budgetRefused = counter(BUDGET_REFUSED, "Retries and hedges the retry budget refused");
      circuitRefused = counter(CIRCUIT_REFUSED, "Attempts the circuit breaker refused; the operation was not called");
      successFirst = outcome(name, "success", "first_attempt");
      successRetried = outcome(name, "success", "retried");
      for (String reason : FAILURE_REASONS) {
        failures.put(reason, outcome(name, "failure", reason));
      }
    }

    private Counter counter(String meter, String description) {
      return Counter.builder(meter).description(description).tags("instance", instance, "retry", name)
          .register(registry);
    }
  }
}
