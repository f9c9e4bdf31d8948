package dev.idem.examples.payments.provider;

import dev.idem.core.Deadline;
import dev.idem.retry.Backoff;
import dev.idem.retry.CircuitBreaker;
import dev.idem.retry.CircuitOpenException;
import dev.idem.retry.Retry;
import dev.idem.retry.RetryException;
import dev.idem.retry.RetryPolicy;
import dev.idem.retry.spi.RetryListener;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.random.RandomGenerator;

/**
 * How the service calls the {@link PaymentProvider}: every charge and refund goes through the {@link Retry} named
 * {@value #NAME}, which retries only {@link ProviderUnavailableException} (the provider refused the call before
 * applying anything, so calling again is safe; and the key derived from the record makes it safe even if it had).
 * A timeout after the provider's commit, or a rejection, ends the call at once: the phase answers it.
 *
 * <ul>
 *   <li>Attempts and backoff are given (the service's defaults: 3 attempts, decorrelated jitter between 20 and
 *       200 ms; see {@code PaymentsProperties.Provider.RetrySettings}).
 *   <li>On a request's thread the retries stay within the request's {@link Deadline} (the client's
 *       {@code Request-Timeout}): a retry whose backoff delay would reach past it is not started, and the call fails
 *       with the last outage. An attempt already started is not cut short (the provider has no cancellation), so a
 *       slow provider can still overrun the deadline. Without a deadline (the completer, or a client that sent none)
 *       the attempts bound the call.
 *   <li>An optional {@link CircuitBreaker} refuses calls while the provider keeps failing; a refused call fails
 *       with {@link ProviderUnavailableException} without calling the provider, so the caller answers it like an
 *       outage (503 {@code DEPENDENCY.unavailable}, retryable).
 * </ul>
 *
 * <p>Thread-safe. The listener (the starter's {@code RetryMeters} in this service) hears of every attempt, retry and
 * refusal under the name {@value #NAME}.
 */
public final class ProviderClient {
  /** The name of the retry, in meters and messages. */
  public static final String NAME = "provider";

  private final PaymentProvider provider;
  private final RetryPolicy<Object> policy;
  private final CircuitBreaker circuitBreaker;
  private final RetryListener listener;
  private final Clock clock;
  private final RandomGenerator random;
  private final Retry<Object> retry;

  /**
   * A client of {@code provider}.
   *
   * @param maxAttempts attempts per call, the first included (1 = no retry)
   * @param backoff the delays between attempts
   * @param circuitBreaker the breaker, or null for none
   * @param listener told of attempts, retries and refusals
   * @param clock the time the deadline is measured on
   * @param random the jitter's randomness, or null for the retry's default ({@code ThreadLocalRandom}); keep it
   *     apart from the provider's fault randomness, or a retry would change which calls fail
   */
  public ProviderClient(PaymentProvider provider, int maxAttempts, Backoff backoff, CircuitBreaker circuitBreaker,
      RetryListener listener, Clock clock, RandomGenerator random) {
    this.provider = Objects.requireNonNull(provider, "provider");
    this.policy = RetryPolicy.<Object>builder().maxAttempts(maxAttempts)
        .backoff(Objects.requireNonNull(backoff, "backoff")).retryOn(ProviderUnavailableException.class).noDeadline()
        .build();
    this.circuitBreaker = circuitBreaker;
    this.listener = Objects.requireNonNull(listener, "listener");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.random = random;
    this.retry = retry(this.policy);
  }

  /** Charges the account once per key, as {@link PaymentProvider#charge}, retrying outages. */
  public ProviderCharge charge(String idempotencyKey, ChargeRequest request) throws ProviderException {
    return call(ProviderCharge.class, () -> provider.charge(idempotencyKey, request));
  }

  /** Refunds once per key, as {@link PaymentProvider#refund}, retrying outages. */
  public ProviderRefund refund(String idempotencyKey, RefundRequest request) throws ProviderException {
    return call(ProviderRefund.class, () -> provider.refund(idempotencyKey, request));
  }

  /**
   * The charge the provider made with this key, if any ({@link PaymentProvider#chargeByKey}): one call, not retried
   * (a reconciler asks again in its next round).
   */
  public Optional<ProviderCharge> lookUpCharge(String idempotencyKey) throws ProviderUnavailableException {
    return provider.chargeByKey(idempotencyKey);
  }

  /** The refund the provider made with this key, if any; see {@link #lookUpCharge}. */
  public Optional<ProviderRefund> lookUpRefund(String idempotencyKey) throws ProviderUnavailableException {
    return provider.refundByKey(idempotencyKey);
  }

  /** The provider called. */
  public PaymentProvider provider() {
    return provider;
  }

  /** The circuit breaker, if one guards the calls. */
  public Optional<CircuitBreaker> circuitBreaker() {
    return Optional.ofNullable(circuitBreaker);
  }

  /** The retry used when the calling thread has no deadline. */
  public Retry<Object> retry() {
    return retry;
  }

  private Retry<Object> retry(RetryPolicy<Object> p) {
    Retry<Object> r = Retry.of(p).withName(NAME).withListener(listener).withClock(clock);
    if (circuitBreaker != null) {
      r = r.withCircuitBreaker(circuitBreaker);
    }
    return random == null ? r : r.withRandom(random);
  }

  /** The retry for this call: bounded by the thread's deadline when there is one. */
  private Retry<Object> forThisCall() {
    Optional<Deadline> deadline = Deadline.current();
    if (deadline.isEmpty()) {
      return retry;
    }
    long left = deadline.get().remainingMillis();
    // with less than a millisecond left the caller has gone: one attempt, no retry
    return retry(left >= 1 ? policy.toBuilder().deadline(Duration.ofMillis(left)).build()
        : policy.toBuilder().maxAttempts(1).build());
  }

  private <T> T call(Class<T> type, Callable<T> operation) throws ProviderException {
    Object result;
    try {
      result = forThisCall().call(operation);
    } catch (CircuitOpenException e) {
      ProviderUnavailableException refused = new ProviderUnavailableException("the provider is not called while"
          + " circuit breaker '" + e.circuitBreaker().name() + "' is open");
      refused.initCause(e);
      throw refused;
    } catch (RetryException e) {
      // exhausted or out of time: the last outage; aborted: a timeout or a rejection, which are not retried
      if (e.getCause() instanceof ProviderException) {
        throw (ProviderException) e.getCause();
      }
      ProviderUnavailableException unavailable = new ProviderUnavailableException(e.getMessage());
      unavailable.initCause(e);
      throw unavailable;
    }
    return type.cast(result);
  }

  @Override
  public String toString() {
    return "ProviderClient[" + retry + "]";
  }
}
