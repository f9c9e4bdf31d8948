package dev.idem.retry;

import dev.idem.retry.spi.RetryListener;
import dev.idem.retry.spi.Sleeper;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Runs an operation under a {@link RetryPolicy}, optionally with a shared {@link RetryBudget}, a
 * {@link CircuitBreaker} and hedging. The entry point of idem-retry:
 *
 * <pre>{@code
 * Retry<Response> retry = Retry.of(RetryPolicy.<Response>ofDefaults()).withBudget(budgetForThisHost);
 * Response r = retry.call(() -> client.send(request));
 * }</pre>
 *
 * <p>Immutable and thread-safe: the {@code with...} methods return a new instance; one instance may run any number of
 * calls concurrently (the budget, breaker, listener, random source and sleeper it holds must then be thread-safe too;
 * the default random source is {@link ThreadLocalRandom}).
 *
 * <p>Per call: {@link RetryBudget#onRequest()} once; before every attempt the breaker's
 * {@link CircuitBreaker#acquirePermit()} (refusal ends the call with {@link CircuitOpenException}, the operation not
 * called); after every attempt {@code onSuccess}/{@code onFailure} on both, the breaker's with the attempt's permit,
 * even when a classification predicate throws (reported as a failure, then propagated) and even when the caller has
 * already completed the async result some other way; an async attempt the caller cancels gives its permit back with
 * {@link CircuitBreaker#onIgnored(long)}; before every retry
 * {@link RetryBudget#tryAcquireRetry()} (refusal ends it with {@link RetryBudgetExhaustedException}). The delay is the
 * backoff's, raised to the server's {@code Retry-After} hint plus a jitter of up to a tenth of the hint (at most the
 * backoff cap) when there is a hint (see {@link RetryPolicy.Builder#retryAfter}); a hint longer than
 * {@link RetryPolicy#maxRetryAfter()} ends the call at once with {@link RetryAfterExceededException}; if the delay
 * lands past the deadline the call ends at once with {@link RetryDeadlineExceededException}. A failure classified as
 * not retryable counts as a success for budget and breaker (the destination answered) and ends the call: unchecked
 * failures are rethrown as they are, checked ones wrapped in {@link RetryAbortedException} (sync) or passed on as they
 * are (async).
 *
 * <p>Implementation note, the success path of {@link #call(Callable)}: a first attempt that succeeds allocates
 * nothing here. The clock is read with {@link Clock#millis()} (no {@code Instant}), and only when the policy has a
 * deadline; budget, breaker and listener take primitives; the loop keeps its state in locals; no lambda, iterator,
 * varargs, boxing or {@code Optional} is on that path. Everything that allocates (delay {@code Duration}s, hints,
 * exceptions) sits behind the first failure. {@code RetryTest.successPathAllocatesNothing} checks this with the
 * thread's allocation counter. A zero delay calls no sleeper: the next attempt starts at once (an interrupted thread
 * still ends the call with {@link RetryAbortedException}, as a sleep would).
 *
 * @param <R> the result type
 */
public final class Retry<R> {
  /** Verdicts of {@link #judge}. */
  private static final int SUCCESS = 0;
  private static final int NOT_RETRYABLE = 1;
  private static final int RETRYABLE = 2;

  private final String name;
  private final RetryPolicy<R> policy;
  private final RetryBudget budget;
  private final CircuitBreaker circuitBreaker;
  private final RetryListener listener;
  private final Clock clock;
  private final RandomGenerator random;
  private final Sleeper sleeper;
  private final Duration hedgeAfter;

  private Retry(
      String name, RetryPolicy<R> policy, RetryBudget budget, CircuitBreaker circuitBreaker, RetryListener listener,
      Clock clock, RandomGenerator random, Sleeper sleeper, Duration hedgeAfter) {
    this.name = name;
    this.policy = policy;
    this.budget = budget;
    this.circuitBreaker = circuitBreaker;
    this.listener = listener;
    this.clock = clock;
    this.random = random;
    this.sleeper = sleeper;
    this.hedgeAfter = hedgeAfter;
  }

  /** Runs under {@code policy}, with no budget, breaker, hedging or listener, on the system clock. */
  public static <R> Retry<R> of(RetryPolicy<R> policy) {
    Objects.requireNonNull(policy, "policy");
    return new Retry<>(
        "retry", policy, null, null, RetryListener.NO_OP, Clock.systemUTC(), null, Sleeper.THREAD_SLEEP, null);
  }

  /** The name in messages and listener events. Default {@code retry}. */
  public Retry<R> withName(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank, was '" + name + "'");
    }
    return new Retry<>(name, policy, budget, circuitBreaker, listener, clock, random, sleeper, hedgeAfter);
  }

  /** Share this budget (one per destination). */
  public Retry<R> withBudget(RetryBudget budget) {
    Objects.requireNonNull(budget, "budget");
    return new Retry<>(name, policy, budget, circuitBreaker, listener, clock, random, sleeper, hedgeAfter);
  }

  /** Share this breaker (one per destination). */
  public Retry<R> withCircuitBreaker(CircuitBreaker circuitBreaker) {
    Objects.requireNonNull(circuitBreaker, "circuitBreaker");
    return new Retry<>(name, policy, budget, circuitBreaker, listener, clock, random, sleeper, hedgeAfter);
  }

  /** Report events to {@code listener}. */
  public Retry<R> withListener(RetryListener listener) {
    Objects.requireNonNull(listener, "listener");
    return new Retry<>(name, policy, budget, circuitBreaker, listener, clock, random, sleeper, hedgeAfter);
  }

  /** Read time (for the deadline) from {@code clock}. */
  public Retry<R> withClock(Clock clock) {
    Objects.requireNonNull(clock, "clock");
    return new Retry<>(name, policy, budget, circuitBreaker, listener, clock, random, sleeper, hedgeAfter);
  }

  /** Draw jitter from {@code random}; it must be thread-safe if this instance runs calls concurrently. */
  public Retry<R> withRandom(RandomGenerator random) {
    Objects.requireNonNull(random, "random");
    return new Retry<>(name, policy, budget, circuitBreaker, listener, clock, random, sleeper, hedgeAfter);
  }

  /** Wait between synchronous attempts with {@code sleeper}. */
  public Retry<R> withSleeper(Sleeper sleeper) {
    Objects.requireNonNull(sleeper, "sleeper");
    return new Retry<>(name, policy, budget, circuitBreaker, listener, clock, random, sleeper, hedgeAfter);
  }

  /**
   * Hedge idempotent async calls: when an attempt has not completed after {@code delay}, start a second copy of it;
   * the first copy to complete with a value wins and the other is cancelled (a copy that fails waits for the other).
   * The hedge needs the breaker's permission ({@link CircuitBreaker#acquirePermit()}: in half-open it takes a probe
   * permit) and the budget's ({@link RetryBudget#tryAcquireHedge()}: a token bucket takes a token, a ratio budget
   * counts a retry), and is skipped when either refuses. The attempt reports one outcome, with the winning copy's
   * breaker permit; the other copy's permit is given back. Only for
   * operations that are safe to run twice, such as requests carrying an idempotency key. Applies to
   * {@link #callAsync} only; {@link #call(Callable)} runs one copy at a time.
   */
  public Retry<R> withHedging(Duration delay) {
    Objects.requireNonNull(delay, "hedge delay");
    if (delay.isNegative()) {
      throw new IllegalArgumentException("hedge delay must be >= 0, was " + delay);
    }
    return new Retry<>(name, policy, budget, circuitBreaker, listener, clock, random, sleeper, delay);
  }

  /** The policy. */
  public RetryPolicy<R> policy() {
    return policy;
  }

  /** The name. */
  public String name() {
    return name;
  }

  /**
   * Runs {@code operation} on this thread until it succeeds or the policy ends it; waits between attempts with the
   * sleeper. The attempt timeout is not enforced here (a thread cannot be stopped safely); the deadline bounds the
   * delays.
   *
   * @return the first result classified as a success
   * @throws RetryException when retries end ({@link RetryExhaustedException}, {@link RetryDeadlineExceededException},
   *     {@link RetryBudgetExhaustedException}, {@link CircuitOpenException}, {@link RetryAbortedException}); an
   *     unchecked failure classified as not retryable is rethrown as it is
   */
  public R call(Callable<? extends R> operation) {
    final long deadlineMillis = policy.deadlineMillis();
    final long deadlineAt = deadlineMillis < 0 ? Long.MAX_VALUE : saturatedAdd(clock.millis(), deadlineMillis);
    if (budget != null) {
      budget.onRequest();
    }
    int attempt = 0;
    long previousDelay = 0;
    Throwable lastCause = null;
    for (;;) {
      attempt++;
      long permit = 0L;
      if (circuitBreaker != null && (permit = circuitBreaker.acquirePermit()) < 0) {
        throw circuitOpen(attempt, lastCause);
      }
      listener.onAttempt(name, attempt);
      R result = null;
      Throwable failure = null;
      try {
        result = operation.call();
      } catch (Throwable t) {
        failure = t;
      }
      int verdict = judge(permit, failure, result);
      if (verdict == SUCCESS) {
        listener.onSuccess(name, attempt, result);
        return result;
      }
      long delay = decide(attempt, previousDelay, verdict, failure, result, deadlineAt, false);
      try {
        if (delay > 0) {
          sleeper.sleep(Duration.ofNanos(delay));
        } else if (Thread.currentThread().isInterrupted()) {
          // no wait to be interrupted in, but an interrupted caller still stops here, as a sleep would have
          Thread.interrupted();
          throw new InterruptedException();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        RetryAbortedException aborted = new RetryAbortedException(
            name + ": interrupted while waiting " + Duration.ofNanos(delay) + " before attempt " + (attempt + 1),
            attempt, e);
        listener.onFailure(name, attempt, aborted);
        throw aborted;
      }
      previousDelay = delay;
      lastCause = failure;
    }
  }

  /**
   * Runs {@code operation} asynchronously: attempts start from {@code scheduler}'s threads (the first from the
   * caller's), delays are scheduled on it, and the policy's attempt timeout (and the deadline) are enforced by
   * cancelling the attempt's future and failing it with a {@link TimeoutException} (retried under the default
   * classification; add it to {@code retryOn} otherwise). The returned future completes with the result or with the
   * exception {@link #call(Callable)} would throw (checked failures as they are). Cancelling it cancels the attempt
   * in flight (its breaker permit is given back) and stops further attempts. This method never throws once the
   * operation has been started: a scheduler that refuses work ({@link RejectedExecutionException}) fails the returned
   * future, and an attempt whose timers cannot be scheduled is not sent. Completing it some other way (such as
   * {@code orTimeout}) stops further attempts; the attempt in flight runs on and its outcome still reaches the budget
   * and the breaker.
   */
  public CompletableFuture<R> callAsync(
      Supplier<? extends CompletionStage<? extends R>> operation, ScheduledExecutorService scheduler) {
    Objects.requireNonNull(operation, "operation");
    Objects.requireNonNull(scheduler, "scheduler");
    AsyncExecution execution = new AsyncExecution(operation, scheduler);
    execution.start();
    return execution.promise;
  }

  private CircuitOpenException circuitOpen(int attempt, Throwable lastCause) {
    listener.onCircuitOpen(name, attempt);
    CircuitOpenException open = new CircuitOpenException(name, attempt - 1, circuitBreaker, lastCause);
    listener.onFailure(name, attempt - 1, open);
    return open;
  }

  /**
   * Classifies an attempt's outcome ({@link #SUCCESS}, {@link #NOT_RETRYABLE} or {@link #RETRYABLE}) and reports it
   * to the budget and the breaker: a retryable failure as a failure, anything else as a success (the destination
   * answered). A classification predicate that throws is reported as a failure, then propagates: the breaker and the
   * budget always hear of an attempt they admitted. Allocates nothing.
   */
  private int judge(long permit, Throwable failure, R result) {
    int verdict;
    try {
      if (failure == null) {
        verdict = policy.isRetryableResult(result) ? RETRYABLE : SUCCESS;
      } else {
        RetryPolicy<?> governing = policy.policyFor(failure);
        // The outer policy's abortOn always wins: a routed policy for a broad type must not retry what it aborts.
        boolean retryable = governing == policy ? policy.isRetryable(failure)
            : !policy.aborts(failure) && governing.isRetryableWhenRouted(failure);
        verdict = retryable ? RETRYABLE : NOT_RETRYABLE;
      }
    } catch (RuntimeException | Error predicateFailure) {
      report(permit, true);
      throw predicateFailure;
    }
    report(permit, verdict == RETRYABLE);
    return verdict;
  }

  private void report(long permit, boolean failed) {
    if (failed) {
      if (budget != null) {
        budget.onFailure();
      }
      if (circuitBreaker != null) {
        circuitBreaker.onFailure(permit);
      }
    } else {
      if (budget != null) {
        budget.onSuccess();
      }
      if (circuitBreaker != null) {
        circuitBreaker.onSuccess(permit);
      }
    }
  }

  /**
   * After a failed attempt (an exception, or a result classified retryable), already judged and reported: the delay
   * in nanoseconds before the next attempt, after the budget granted it and the listener heard of it; or throws what
   * ends the call.
   */
  private long decide(
      int attempt, long previousDelay, int verdict, Throwable failure, R result, long deadlineAt, boolean async) {
    RetryPolicy<?> governing = failure == null ? policy : policy.policyFor(failure);
    if (failure != null) {
      if (verdict == NOT_RETRYABLE) {
        Throwable terminal = failure;
        if (failure instanceof InterruptedException && !async) {
          Thread.currentThread().interrupt();
          terminal = new RetryAbortedException(name + ": interrupted in attempt " + attempt, attempt, failure);
        } else if (!async && !(failure instanceof RuntimeException) && !(failure instanceof Error)) {
          terminal = new RetryAbortedException(
              name + ": attempt " + attempt + " failed with " + failure + ", which " + policy
                  + " classifies as not retryable", attempt, failure);
        }
        listener.onFailure(name, attempt, terminal);
        throw Retry.<RuntimeException>sneaky(terminal);
      }
    }
    if (attempt >= governing.maxAttempts()) {
      throw terminal(attempt, new RetryExhaustedException(name, attempt, failure, failure == null ? result : null));
    }
    long delay = governing.backoff().delayNanos(
        attempt, previousDelay, random != null ? random : ThreadLocalRandom.current());
    Duration hint = hint(failure, result);
    if (hint != null) {
      long hintNanos = saturatedNanos(hint);
      long maxNanos = policy.maxRetryAfterNanos();
      if (maxNanos >= 0 && hintNanos > maxNanos) {
        throw terminal(attempt, new RetryAfterExceededException(
            name, attempt, hint, policy.maxRetryAfter().orElseThrow(), failure));
      }
      delay = Math.max(delay, saturatedAdd(hintNanos, hintJitter(hintNanos, governing.backoff())));
    }
    if (deadlineAt != Long.MAX_VALUE) {
      long remainingMillis = Math.max(0L, deadlineAt - clock.millis());
      long remainingNanos = remainingMillis > Long.MAX_VALUE / 1_000_000L ? Long.MAX_VALUE
          : remainingMillis * 1_000_000L;
      if (delay >= remainingNanos) {
        throw terminal(attempt, new RetryDeadlineExceededException(
            name, attempt, policy.deadline().orElseThrow(), Duration.ofMillis(remainingMillis), Duration.ofNanos(delay),
            hint, failure));
      }
    }
    if (budget != null && !budget.tryAcquireRetry()) {
      listener.onBudgetRefused(name, attempt);
      throw terminal(attempt, new RetryBudgetExhaustedException(name, attempt, budget, failure));
    }
    listener.onRetryScheduled(name, attempt, Duration.ofNanos(delay), failure, failure == null ? result : null);
    return delay;
  }

  private RetryException terminal(int attempts, RetryException failure) {
    listener.onFailure(name, attempts, failure);
    return failure;
  }

  private Duration hint(Throwable failure, R result) {
    Optional<Duration> hint;
    if (failure != null) {
      if (!(failure instanceof RetryAfterHint)) {
        return null;
      }
      hint = ((RetryAfterHint) failure).retryAfter();
    } else {
      hint = policy.retryAfter(result);
    }
    if (hint == null || hint.isEmpty()) {
      return null;
    }
    return hint.get().isNegative() ? Duration.ZERO : hint.get();
  }

  /** Uniform in {@code [0, min(hint / 10, backoff cap)]} nanoseconds, from the random source; see the class comment. */
  private long hintJitter(long hintNanos, Backoff backoff) {
    long bound = Math.min(hintNanos / 10, saturatedNanos(backoff.cap()));
    if (bound <= 0) {
      return 0L;
    }
    RandomGenerator r = random != null ? random : ThreadLocalRandom.current();
    return bound == Long.MAX_VALUE ? r.nextLong(bound) : r.nextLong(bound + 1);
  }

  private static long saturatedNanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return ((a ^ sum) & (b ^ sum)) < 0 ? Long.MAX_VALUE : sum;
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> T sneaky(Throwable t) throws T {
    throw (T) t;
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  @Override
  public String toString() {
    return "Retry '" + name + "' [" + policy + (budget != null ? ", " + budget : "")
        + (circuitBreaker != null ? ", " + circuitBreaker : "") + (hedgeAfter != null ? ", hedge after " + hedgeAfter
        : "") + "]";
  }

  /** One async call: attempts run one after another, each possibly as a primary and a hedge. */
  private final class AsyncExecution implements Runnable {
    final Supplier<? extends CompletionStage<? extends R>> operation;
    final ScheduledExecutorService scheduler;
    final CompletableFuture<R> promise = new CompletableFuture<>();
    final long deadlineAt;
    /** The attempt in flight, for cancellation by the caller. */
    volatile AttemptRun current;
    // Handed from attempt to attempt through the scheduler and the attempt's monitor, never touched concurrently.
    int attempt;
    long previousDelay;
    Throwable lastCause;

    AsyncExecution(Supplier<? extends CompletionStage<? extends R>> operation, ScheduledExecutorService scheduler) {
      this.operation = operation;
      this.scheduler = scheduler;
      long deadlineMillis = policy.deadlineMillis();
      this.deadlineAt = deadlineMillis < 0 ? Long.MAX_VALUE : saturatedAdd(clock.millis(), deadlineMillis);
    }

    void start() {
      if (budget != null) {
        budget.onRequest();
      }
      promise.whenComplete((r, t) -> {
        AttemptRun run = current;
        if (promise.isCancelled() && run != null) {
          run.cancelByCaller();
        }
      });
      run();
    }

    @Override
    public void run() {
      if (promise.isDone()) {
        return;
      }
      attempt++;
      long permit = 0L;
      if (circuitBreaker != null && (permit = circuitBreaker.acquirePermit()) < 0) {
        promise.completeExceptionally(circuitOpen(attempt, lastCause));
        return;
      }
      listener.onAttempt(name, attempt);
      AttemptRun run = new AttemptRun(this, attempt, permit);
      current = run;
      run.start();
      if (promise.isCancelled()) {
        run.cancelByCaller();
      }
    }

    /**
     * The attempt's outcome is judged and reported to budget and breaker even when the promise is already done (the
     * caller completed it, say with {@code orTimeout}): an admitted attempt always reports.
     */
    void onAttemptDone(int attemptNumber, long permit, R result, Throwable failure) {
      int verdict;
      try {
        verdict = judge(permit, failure, result);
      } catch (Throwable predicateFailure) {
        promise.completeExceptionally(predicateFailure);
        return;
      }
      if (promise.isDone()) {
        return;
      }
      if (verdict == SUCCESS) {
        listener.onSuccess(name, attemptNumber, result);
        promise.complete(result);
        return;
      }
      long delay;
      try {
        delay = decide(attemptNumber, previousDelay, verdict, failure, result, deadlineAt, true);
      } catch (Throwable terminal) {
        promise.completeExceptionally(terminal);
        return;
      }
      previousDelay = delay;
      lastCause = failure;
      try {
        if (delay == 0) {
          scheduler.execute(this);
        } else {
          scheduler.schedule(this, delay, TimeUnit.NANOSECONDS);
        }
      } catch (RejectedExecutionException e) {
        promise.completeExceptionally(e);
      }
    }

    long timeoutNanos(int attemptNumber) {
      long timeout = policy.attemptTimeout(attemptNumber).toNanos();
      if (deadlineAt != Long.MAX_VALUE) {
        long remainingMillis = Math.max(1L, deadlineAt - clock.millis());
        long remaining = remainingMillis > Long.MAX_VALUE / 1_000_000L ? Long.MAX_VALUE : remainingMillis * 1_000_000L;
        timeout = timeout == 0 ? remaining : Math.min(timeout, remaining);
      }
      return timeout;
    }
  }

  /** One attempt of an async call: the primary copy, maybe a hedge, maybe a timeout. Guarded by its monitor. */
  private final class AttemptRun {
    final AsyncExecution execution;
    final int attempt;
    /** The breaker's permit of the primary copy. */
    final long permit;
    CompletableFuture<? extends R> primary;
    CompletableFuture<? extends R> hedge;
    /** The breaker's permit of the hedge, -1 while there is none. */
    long hedgePermit = -1L;
    ScheduledFuture<?> timeoutTask;
    ScheduledFuture<?> hedgeTask;
    int running;
    boolean settled;
    Object winner;

    AttemptRun(AsyncExecution execution, int attempt, long permit) {
      this.execution = execution;
      this.attempt = attempt;
      this.permit = permit;
    }

    /**
     * Schedules the timers first, then sends: a scheduler that refuses the timers fails the call before anything is
     * sent (the breaker permit given back), and nothing can throw once the operation has been started.
     */
    void start() {
      long timeout = execution.timeoutNanos(attempt);
      try {
        synchronized (this) {
          running = 1;
          if (timeout > 0) {
            timeoutTask = execution.scheduler.schedule(() -> timeout(timeout), timeout, TimeUnit.NANOSECONDS);
          }
          if (hedgeAfter != null) {
            hedgeTask = execution.scheduler.schedule(this::hedge, saturatedNanos(hedgeAfter), TimeUnit.NANOSECONDS);
          }
        }
      } catch (RejectedExecutionException e) {
        synchronized (this) {
          settled = true;
        }
        cancelRest();
        if (circuitBreaker != null) {
          circuitBreaker.onIgnored(permit);
        }
        execution.promise.completeExceptionally(e);
        return;
      }
      synchronized (this) {
        if (settled) {
          // timed out (or cancelled) before it was sent: send nothing
          return;
        }
      }
      CompletableFuture<? extends R> first = launch(false);
      boolean cancel;
      synchronized (this) {
        primary = first;
        cancel = settled && winner != first;
      }
      if (cancel) {
        first.cancel(true);
      }
    }

    CompletableFuture<? extends R> launch(boolean isHedge) {
      CompletableFuture<? extends R> future;
      try {
        CompletionStage<? extends R> stage = execution.operation.get();
        future = stage == null
            ? CompletableFuture.failedFuture(new NullPointerException(name + ": operation returned null"))
            : stage.toCompletableFuture();
      } catch (Throwable t) {
        future = CompletableFuture.failedFuture(t);
      }
      final CompletableFuture<? extends R> source = future;
      source.whenComplete((r, t) -> completed(source, isHedge, r, t));
      return source;
    }

    void completed(CompletableFuture<? extends R> source, boolean isHedge, R result, Throwable failure) {
      long mine;
      long other;
      synchronized (this) {
        if (settled) {
          return;
        }
        running--;
        if (failure != null && running > 0) {
          return;
        }
        settled = true;
        winner = source;
        mine = isHedge ? hedgePermit : permit;
        other = isHedge ? permit : hedgePermit;
      }
      cancelRest();
      if (circuitBreaker != null && other >= 0) {
        // the losing copy reports nothing: its permit goes back
        circuitBreaker.onIgnored(other);
      }
      execution.onAttemptDone(attempt, mine, result, failure == null ? null : unwrap(failure));
    }

    void timeout(long timeoutNanos) {
      long h;
      synchronized (this) {
        if (settled) {
          return;
        }
        settled = true;
        h = hedgePermit;
      }
      cancelRest();
      if (circuitBreaker != null && h >= 0) {
        circuitBreaker.onIgnored(h);
      }
      execution.onAttemptDone(attempt, permit, null, new TimeoutException(
          name + ": attempt " + attempt + " timed out after " + Duration.ofNanos(timeoutNanos)));
    }

    /** The caller cancelled: the attempt ends without an outcome, and its breaker permit is given back. */
    void cancelByCaller() {
      long h;
      synchronized (this) {
        if (settled) {
          return;
        }
        settled = true;
        h = hedgePermit;
      }
      cancelRest();
      if (circuitBreaker != null) {
        circuitBreaker.onIgnored(permit);
        if (h >= 0) {
          circuitBreaker.onIgnored(h);
        }
      }
    }

    void hedge() {
      synchronized (this) {
        if (settled) {
          return;
        }
      }
      long p = 0L;
      if (circuitBreaker != null && (p = circuitBreaker.acquirePermit()) < 0) {
        return;
      }
      if (budget != null && !budget.tryAcquireHedge()) {
        if (circuitBreaker != null) {
          circuitBreaker.onIgnored(p);
        }
        listener.onBudgetRefused(name, attempt);
        return;
      }
      boolean go;
      synchronized (this) {
        go = !settled;
        if (go) {
          running++;
          hedgePermit = p;
        }
      }
      if (!go) {
        if (circuitBreaker != null) {
          circuitBreaker.onIgnored(p);
        }
        return;
      }
      listener.onHedge(name, attempt);
      CompletableFuture<? extends R> second = launch(true);
      boolean cancel;
      synchronized (this) {
        hedge = second;
        cancel = settled && winner != second;
      }
      if (cancel) {
        second.cancel(true);
      }
    }

    private void cancelRest() {
      CompletableFuture<? extends R> p;
      CompletableFuture<? extends R> h;
      ScheduledFuture<?> t;
      ScheduledFuture<?> ht;
      Object w;
      synchronized (this) {
        p = primary;
        h = hedge;
        t = timeoutTask;
        ht = hedgeTask;
        w = winner;
      }
      if (t != null) {
        t.cancel(false);
      }
      if (ht != null) {
        ht.cancel(false);
      }
      if (p != null && p != w) {
        p.cancel(true);
      }
      if (h != null && h != w) {
        h.cancel(true);
      }
    }
  }
}
