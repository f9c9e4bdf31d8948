package dev.idem.examples.payments.provider;

import dev.idem.examples.payments.web.PaymentsProblems;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;

/**
 * The provider's fault switch: the {@link ProviderFaults} in force, and the draws that decide whether a call fails.
 * Randomness comes from the injected generator, so a seeded generator replays the same faults. Thread-safe.
 */
public final class FaultInjection {
  private final AtomicReference<ProviderFaults> faults;
  private final RandomGenerator random;

  public FaultInjection(ProviderFaults initial, RandomGenerator random) {
    this.faults = new AtomicReference<>(Objects.requireNonNull(initial, "initial"));
    this.random = Objects.requireNonNull(random, "random");
  }

  public ProviderFaults current() {
    return faults.get();
  }

  public void set(ProviderFaults next) {
    faults.set(Objects.requireNonNull(next, "faults"));
  }

  /**
   * Waits the configured latency, then fails the call before it applies anything at the error rate, as an outage
   * ({@link ProviderUnavailableException}).
   */
  void beforeCall(String call) throws ProviderUnavailableException {
    ProviderFaults f = faults.get();
    if (f.latencyMs() > 0) {
      try {
        Thread.sleep(f.latencyMs());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ProviderUnavailableException(call + ": interrupted while waiting for the provider");
      }
    }
    if (draw(f.errorRate())) {
      throw new ProviderUnavailableException(call + ": the provider is unavailable (injected fault)");
    }
  }

  /**
   * Refuses a call for good at the refusal rate ({@link ProviderRejectedException} with
   * {@link PaymentsProblems#PROVIDER_REFUSED}), before it applies anything. Only for a key the provider has not seen:
   * a provider answers a key it applied with what it applied, whatever it would decide for a new one.
   */
  void refuseNewCall(String call) throws ProviderRejectedException {
    if (draw(faults.get().refusalRate())) {
      throw new ProviderRejectedException(PaymentsProblems.PROVIDER_REFUSED, call
          + ": the provider refused the call for good (injected fault; nothing was applied)");
    }
  }

  /** Fails an applied, committed call with a timeout, at the timeout-after-commit rate. */
  void afterCommit(String call) throws ProviderTimeoutException {
    if (draw(faults.get().timeoutAfterCommitRate())) {
      throw new ProviderTimeoutException(call + ": the provider did not answer in time (injected fault;"
          + " the call was applied)");
    }
  }

  private boolean draw(double rate) {
    if (rate <= 0) {
      return false;
    }
    synchronized (random) {
      return random.nextDouble() < rate;
    }
  }
}
