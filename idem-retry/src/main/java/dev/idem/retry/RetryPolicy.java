package dev.idem.retry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * When to retry, how often and how long to wait: max attempts, {@link Backoff}, a total deadline, a per-attempt
 * timeout with optional escalation, classification of failures and results, a {@code Retry-After} hint from results,
 * and routed policies for particular failure types. Immutable and thread-safe; build with {@link #builder()}, vary
 * with {@link #toBuilder()}, run with {@link Retry#of(RetryPolicy)}.
 *
 * <p>Classification of a failure (an exception), first rule that applies:
 *
 * <ol>
 *   <li>an {@link Error} or an {@link InterruptedException} is never retried;
 *   <li>a type given to {@link Builder#abortOn} is not retried;
 *   <li>a type given to {@link Builder#retryOn}, or a failure matching {@link Builder#retryIf}, is retried;
 *   <li>with neither {@code retryOn} nor {@code retryIf}, the defaults (docs/architecture.md#what-is-retried) apply:
 *       connection failures and timeouts ({@link IOException}, {@link UncheckedIOException},
 *       {@link TimeoutException}, and their subclasses) are retried, anything else is not.
 * </ol>
 *
 * <p>Classification of a result: {@link Builder#abortOnResult} wins (the result is returned as it is), then
 * {@link Builder#retryOnResult} (retried like a failure); any other result is a success.
 *
 * <p>Several policies keyed by failure type: {@link Builder#policyFor(Class, RetryPolicy)} routes a failure that is an
 * instance of the key (first registered key wins) to another policy, whose classification (retry when it has none),
 * max attempts (counted over the whole operation) and backoff then decide. Deadline, attempt timeout and result
 * rules always come from this policy. Routed policies are not routed further.
 *
 * @param <R> the result type
 */
public final class RetryPolicy<R> {
  /** The smallest default of {@link Builder#maxRetryAfter(Duration)}, for policies without a deadline: 60 s. */
  public static final Duration DEFAULT_MAX_RETRY_AFTER = Duration.ofSeconds(60);

  private static final List<Class<? extends Throwable>> DEFAULT_RETRY_ON =
      List.of(IOException.class, UncheckedIOException.class, TimeoutException.class);

  private final int maxAttempts;
  private final Backoff backoff;
  private final Duration deadline;
  private final long deadlineMillis;
  private final Duration explicitMaxRetryAfter;
  private final Duration maxRetryAfter;
  private final long maxRetryAfterNanos;
  private final Duration attemptTimeout;
  private final double attemptTimeoutEscalation;
  private final Duration maxAttemptTimeout;
  private final List<Class<? extends Throwable>> retryOn;
  private final List<Class<? extends Throwable>> abortOn;
  private final Predicate<Throwable> retryIf;
  private final Predicate<? super R> retryOnResult;
  private final Predicate<? super R> abortOnResult;
  private final Function<? super R, Optional<Duration>> retryAfter;
  private final List<Class<? extends Throwable>> routeKeys;
  private final List<RetryPolicy<?>> routePolicies;

  private RetryPolicy(Builder<R> b) {
    this.maxAttempts = b.maxAttempts;
    this.backoff = b.backoff;
    this.deadline = b.deadline;
    this.deadlineMillis = b.deadline == null ? -1L : b.deadline.toMillis();
    this.explicitMaxRetryAfter = b.maxRetryAfter;
    if (b.maxRetryAfter != null) {
      this.maxRetryAfter = b.maxRetryAfter;
    } else if (b.deadline == null) {
      this.maxRetryAfter = b.backoff.cap().compareTo(DEFAULT_MAX_RETRY_AFTER) > 0
          ? b.backoff.cap() : DEFAULT_MAX_RETRY_AFTER;
    } else {
      this.maxRetryAfter = null;
    }
    long maxNanos;
    try {
      maxNanos = maxRetryAfter == null ? -1L : maxRetryAfter.toNanos();
    } catch (ArithmeticException e) {
      maxNanos = Long.MAX_VALUE;
    }
    this.maxRetryAfterNanos = maxNanos;
    this.attemptTimeout = b.attemptTimeout;
    this.attemptTimeoutEscalation = b.attemptTimeoutEscalation;
    this.maxAttemptTimeout = b.maxAttemptTimeout;
    this.retryOn = List.copyOf(b.retryOn);
    this.abortOn = List.copyOf(b.abortOn);
    this.retryIf = b.retryIf;
    this.retryOnResult = b.retryOnResult;
    this.abortOnResult = b.abortOnResult;
    this.retryAfter = b.retryAfter;
    this.routeKeys = List.copyOf(b.routeKeys);
    this.routePolicies = List.copyOf(b.routePolicies);
  }

  /** A builder with the defaults of {@link #ofDefaults()}. */
  public static <R> Builder<R> builder() {
    return new Builder<>();
  }

  /**
   * Max attempts 5 (4 retries), exponential backoff from 100 ms to 10 s with {@link Jitter#FULL}, total deadline 30 s,
   * no attempt timeout, default classification (connection failures and timeouts), every result a success.
   */
  public static <R> RetryPolicy<R> ofDefaults() {
    return new Builder<R>().build();
  }

  /** A builder holding this policy's settings, to build a variant. */
  public Builder<R> toBuilder() {
    return new Builder<>(this);
  }

  /** Attempts in total, the first included; at least 1. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** Delays between attempts. */
  public Backoff backoff() {
    return backoff;
  }

  /** The total deadline over all attempts and delays, if any. */
  public Optional<Duration> deadline() {
    return Optional.ofNullable(deadline);
  }

  long deadlineMillis() {
    return deadlineMillis;
  }

  /**
   * The longest {@code Retry-After} hint waited for; a longer one ends the call with
   * {@link RetryAfterExceededException}. What {@link Builder#maxRetryAfter(Duration)} set; when not set, for a
   * policy without a deadline, the larger of 60 s and the backoff cap; empty for a policy with a deadline and no
   * explicit maximum (the deadline bounds the wait).
   */
  public Optional<Duration> maxRetryAfter() {
    return Optional.ofNullable(maxRetryAfter);
  }

  /** {@link #maxRetryAfter()} in nanoseconds, -1 when there is none. */
  long maxRetryAfterNanos() {
    return maxRetryAfterNanos;
  }

  /** The timeout of the first attempt, if any (enforced by {@link Retry#callAsync}). */
  public Optional<Duration> attemptTimeout() {
    return Optional.ofNullable(attemptTimeout);
  }

  /**
   * The timeout of attempt number {@code attempt}: {@code attemptTimeout * escalation^(attempt-1)}, at most the
   * configured maximum; zero when there is no attempt timeout.
   */
  public Duration attemptTimeout(int attempt) {
    if (attemptTimeout == null) {
      return Duration.ZERO;
    }
    double nanos = attemptTimeout.toNanos() * Math.pow(attemptTimeoutEscalation, attempt - 1);
    long capped = (long) Math.min(nanos, (double) maxAttemptTimeout.toNanos());
    return Duration.ofNanos(capped);
  }

  /** Whether a failure is retried under this policy (routes not applied; see {@link #policyFor(Throwable)}). */
  public boolean isRetryable(Throwable failure) {
    if (failure instanceof Error || failure instanceof InterruptedException) {
      return false;
    }
    if (isInstanceOfAny(failure, abortOn)) {
      return false;
    }
    if (retryOn.isEmpty() && retryIf == null) {
      return isInstanceOfAny(failure, DEFAULT_RETRY_ON);
    }
    return isInstanceOfAny(failure, retryOn) || (retryIf != null && retryIf.test(failure));
  }

  /** Whether {@code abortOn} names this failure's type (or a supertype). */
  boolean aborts(Throwable failure) {
    return isInstanceOfAny(failure, abortOn);
  }

  /** Whether a failure is retried by a routed policy with no classification of its own: yes unless Error/abortOn. */
  boolean isRetryableWhenRouted(Throwable failure) {
    if (retryOn.isEmpty() && retryIf == null) {
      return !(failure instanceof Error || failure instanceof InterruptedException)
          && !isInstanceOfAny(failure, abortOn);
    }
    return isRetryable(failure);
  }

  /** Whether a result is retried: matches {@code retryOnResult} and not {@code abortOnResult}. Never allocates. */
  public boolean isRetryableResult(R result) {
    if (retryOnResult == null) {
      return false;
    }
    if (abortOnResult != null && abortOnResult.test(result)) {
      return false;
    }
    return retryOnResult.test(result);
  }

  /** The result's {@code Retry-After} hint, per {@link Builder#retryAfter}. */
  public Optional<Duration> retryAfter(R result) {
    if (retryAfter == null) {
      return Optional.empty();
    }
    Optional<Duration> hint = retryAfter.apply(result);
    return hint == null ? Optional.empty() : hint;
  }

  /** The policy that governs {@code failure}: the first route whose key it is an instance of, else this policy. */
  public RetryPolicy<?> policyFor(Throwable failure) {
    for (int i = 0; i < routeKeys.size(); i++) {
      if (routeKeys.get(i).isInstance(failure)) {
        return routePolicies.get(i);
      }
    }
    return this;
  }

  private static boolean isInstanceOfAny(Throwable failure, List<Class<? extends Throwable>> types) {
    for (int i = 0; i < types.size(); i++) {
      if (types.get(i).isInstance(failure)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return "RetryPolicy[maxAttempts=" + maxAttempts + ", " + backoff + ", deadline=" + deadline + ", attemptTimeout="
        + attemptTimeout + (attemptTimeoutEscalation != 1.0 ? " x" + attemptTimeoutEscalation + " up to "
        + maxAttemptTimeout : "") + ", retryOn=" + (retryOn.isEmpty() && retryIf == null ? "defaults" : retryOn)
        + ", abortOn=" + abortOn + ", routes=" + routeKeys + "]";
  }

  /**
   * Mutable, not thread-safe. Every setter validates at once; the message names the parameter and the bad value.
   *
   * @param <R> the result type
   */
  public static final class Builder<R> {
    private int maxAttempts = 5;
    private Backoff backoff = Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(10), Jitter.FULL);
    private Duration deadline = Duration.ofSeconds(30);
    private Duration maxRetryAfter;
    private Duration attemptTimeout;
    private double attemptTimeoutEscalation = 1.0;
    private Duration maxAttemptTimeout;
    private final List<Class<? extends Throwable>> retryOn = new ArrayList<>();
    private final List<Class<? extends Throwable>> abortOn = new ArrayList<>();
    private Predicate<Throwable> retryIf;
    private Predicate<? super R> retryOnResult;
    private Predicate<? super R> abortOnResult;
    private Function<? super R, Optional<Duration>> retryAfter;
    private final List<Class<? extends Throwable>> routeKeys = new ArrayList<>();
    private final List<RetryPolicy<?>> routePolicies = new ArrayList<>();

    private Builder() {}

    private Builder(RetryPolicy<R> p) {
      maxAttempts = p.maxAttempts;
      backoff = p.backoff;
      deadline = p.deadline;
      maxRetryAfter = p.explicitMaxRetryAfter;
      attemptTimeout = p.attemptTimeout;
      attemptTimeoutEscalation = p.attemptTimeoutEscalation;
      maxAttemptTimeout = p.maxAttemptTimeout;
      retryOn.addAll(p.retryOn);
      abortOn.addAll(p.abortOn);
      retryIf = p.retryIf;
      retryOnResult = p.retryOnResult;
      abortOnResult = p.abortOnResult;
      retryAfter = p.retryAfter;
      routeKeys.addAll(p.routeKeys);
      routePolicies.addAll(p.routePolicies);
    }

    /** Attempts in total, the first included (1 = no retries). Default 5. */
    public Builder<R> maxAttempts(int maxAttempts) {
      if (maxAttempts < 1) {
        throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
      }
      this.maxAttempts = maxAttempts;
      return this;
    }

    /** The delays between attempts. Default exponential 100 ms to 10 s, full jitter. */
    public Builder<R> backoff(Backoff backoff) {
      this.backoff = Objects.requireNonNull(backoff, "backoff");
      return this;
    }

    /** Exponential backoff from {@code base} to {@code cap} with the current jitter ({@link Jitter#FULL} if none). */
    public Builder<R> backoff(Duration base, Duration cap) {
      Jitter jitter = backoff.cap().isZero() ? Jitter.FULL : backoff.jitter();
      return backoff(Backoff.exponential(base, cap, jitter));
    }

    /** Exponential backoff with the given jitter and the current base and cap (defaults 100 ms, 10 s if none). */
    public Builder<R> jitter(Jitter jitter) {
      Objects.requireNonNull(jitter, "jitter");
      if (backoff.cap().isZero()) {
        return backoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(10), jitter));
      }
      return backoff(Backoff.exponential(backoff.base(), backoff.cap(), jitter));
    }

    /** The total time over all attempts and delays. Default 30 s. */
    public Builder<R> deadline(Duration deadline) {
      Objects.requireNonNull(deadline, "deadline");
      if (deadline.isNegative() || deadline.isZero() || deadline.toMillis() == 0) {
        throw new IllegalArgumentException("deadline must be >= 1 ms, was " + deadline);
      }
      this.deadline = deadline;
      return this;
    }

    /** No total deadline: only max attempts bound the operation. */
    public Builder<R> noDeadline() {
      this.deadline = null;
      return this;
    }

    /**
     * The longest server {@code Retry-After} hint to wait for: a longer hint ends the call at once with
     * {@link RetryAfterExceededException} instead of parking the caller (a {@code Retry-After: 31536000} would
     * otherwise wait a year). When set, it always applies. When not set, a policy without a deadline uses the larger
     * of {@link RetryPolicy#DEFAULT_MAX_RETRY_AFTER} (60 s) and the backoff cap, and a policy with a deadline has no
     * maximum of its own (a hint past the deadline ends the call with {@link RetryDeadlineExceededException}).
     *
     * @throws IllegalArgumentException unless {@code max > 0}
     */
    public Builder<R> maxRetryAfter(Duration max) {
      Objects.requireNonNull(max, "maxRetryAfter");
      if (max.isNegative() || max.isZero()) {
        throw new IllegalArgumentException("maxRetryAfter must be > 0, was " + max);
      }
      this.maxRetryAfter = max;
      return this;
    }

    /** The timeout of each attempt (async calls). None by default. */
    public Builder<R> attemptTimeout(Duration timeout) {
      Objects.requireNonNull(timeout, "attemptTimeout");
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException("attemptTimeout must be > 0, was " + timeout);
      }
      this.attemptTimeout = timeout;
      if (maxAttemptTimeout == null || maxAttemptTimeout.compareTo(timeout) < 0) {
        this.maxAttemptTimeout = timeout;
      }
      return this;
    }

    /**
     * Grow the attempt timeout by {@code factor} per attempt (1.5 = 50 % longer each time), at most {@code max}.
     * Requires {@link #attemptTimeout(Duration)} first.
     */
    public Builder<R> attemptTimeoutEscalation(double factor, Duration max) {
      Objects.requireNonNull(max, "max");
      if (attemptTimeout == null) {
        throw new IllegalStateException("attemptTimeoutEscalation needs attemptTimeout to be set first");
      }
      if (!(factor >= 1.0) || Double.isInfinite(factor)) {
        throw new IllegalArgumentException("attemptTimeoutEscalation factor must be >= 1 and finite, was " + factor);
      }
      if (max.compareTo(attemptTimeout) < 0) {
        throw new IllegalArgumentException(
            "attemptTimeoutEscalation max must be >= attemptTimeout (" + attemptTimeout + "), was " + max);
      }
      this.attemptTimeoutEscalation = factor;
      this.maxAttemptTimeout = max;
      return this;
    }

    /** Retry failures of these types (and subtypes). Replaces the defaults (see the class comment). */
    @SafeVarargs
    public final Builder<R> retryOn(Class<? extends Throwable>... types) {
      Objects.requireNonNull(types, "retryOn");
      if (types.length == 0) {
        throw new IllegalArgumentException("retryOn needs at least one type, was none");
      }
      for (Class<? extends Throwable> type : types) {
        retryOn.add(Objects.requireNonNull(type, "retryOn type"));
      }
      return this;
    }

    /** Never retry failures of these types (and subtypes); wins over {@code retryOn} and {@code retryIf}. */
    @SafeVarargs
    public final Builder<R> abortOn(Class<? extends Throwable>... types) {
      Objects.requireNonNull(types, "abortOn");
      if (types.length == 0) {
        throw new IllegalArgumentException("abortOn needs at least one type, was none");
      }
      for (Class<? extends Throwable> type : types) {
        abortOn.add(Objects.requireNonNull(type, "abortOn type"));
      }
      return this;
    }

    /** Retry failures that match; or-ed with earlier predicates. Replaces the defaults (see the class comment). */
    public Builder<R> retryIf(Predicate<Throwable> predicate) {
      Objects.requireNonNull(predicate, "retryIf");
      this.retryIf = retryIf == null ? predicate : retryIf.or(predicate);
      return this;
    }

    /** Retry results that match (a 503 response, say). */
    public Builder<R> retryOnResult(Predicate<? super R> predicate) {
      this.retryOnResult = Objects.requireNonNull(predicate, "retryOnResult");
      return this;
    }

    /** Never retry results that match, even when {@code retryOnResult} does; the result is returned as it is. */
    public Builder<R> abortOnResult(Predicate<? super R> predicate) {
      this.abortOnResult = Objects.requireNonNull(predicate, "abortOnResult");
      return this;
    }

    /**
     * How to read a server's {@code Retry-After} hint from a retried result (for instance with
     * {@link RetryAfter#parse(String, String, java.time.Clock)}). The hint, plus a small jitter, is a floor on the
     * next delay: the delay is {@code max(backoff delay, hint + j)} with {@code j} drawn uniformly from
     * {@code [0, min(hint / 10, backoff cap)]} (inclusive, in nanoseconds) from the retry's random source, so that
     * clients given the same hint do not all come back at the same instant. A hint longer than
     * {@link #maxRetryAfter(Duration)} ends the operation at once with {@link RetryAfterExceededException}; a delay
     * past the deadline ends it with {@link RetryDeadlineExceededException}. Failures carry hints by implementing
     * {@link RetryAfterHint}.
     */
    public Builder<R> retryAfter(Function<? super R, Optional<Duration>> extractor) {
      this.retryAfter = Objects.requireNonNull(extractor, "retryAfter");
      return this;
    }

    /**
     * Route failures of type {@code type} to {@code policy} (see the class comment): its classification, max attempts
     * and backoff govern them.
     */
    public Builder<R> policyFor(Class<? extends Throwable> type, RetryPolicy<?> policy) {
      Objects.requireNonNull(type, "policyFor type");
      Objects.requireNonNull(policy, "policyFor policy");
      if (!policy.routeKeys.isEmpty()) {
        throw new IllegalArgumentException("policyFor " + type.getName() + ": a routed policy must not have routes of"
            + " its own, was " + policy);
      }
      routeKeys.add(type);
      routePolicies.add(policy);
      return this;
    }

    /** The immutable policy. */
    public RetryPolicy<R> build() {
      return new RetryPolicy<>(this);
    }
  }
}
