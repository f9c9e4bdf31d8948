package dev.idem.examples.payments.provider;

import dev.idem.examples.payments.web.Json;
import dev.idem.examples.payments.web.PaymentsProblems;
import java.util.Map;

/**
 * The faults the simulated provider injects into every call.
 *
 * @param timeoutAfterCommitRate probability (0..1) that a call is applied and committed, and the caller then gets a
 *     timeout
 * @param errorRate probability (0..1) that a call fails before anything is applied
 * @param latencyMs delay added to every call, 0..60000
 * @param refusalRate probability (0..1) that a call is refused for good before anything is applied (a
 *     {@link ProviderRejectedException} with {@link PaymentsProblems#PROVIDER_REFUSED}): calling again cannot succeed
 */
public record ProviderFaults(double timeoutAfterCommitRate, double errorRate, long latencyMs, double refusalRate) {
  public static final long MAX_LATENCY_MS = 60_000;

  /** @throws IllegalArgumentException naming the field and its value when one is out of range */
  public ProviderFaults {
    checkRate("provider_timeout_after_commit_rate", timeoutAfterCommitRate);
    checkRate("provider_error_rate", errorRate);
    if (latencyMs < 0 || latencyMs > MAX_LATENCY_MS) {
      throw new IllegalArgumentException("provider_latency_ms must be 0.." + MAX_LATENCY_MS + ", got " + latencyMs);
    }
    checkRate("provider_refusal_rate", refusalRate);
  }

  /** The faults without permanent refusals. */
  public ProviderFaults(double timeoutAfterCommitRate, double errorRate, long latencyMs) {
    this(timeoutAfterCommitRate, errorRate, latencyMs, 0);
  }

  public static ProviderFaults none() {
    return new ProviderFaults(0, 0, 0, 0);
  }

  private static void checkRate(String name, double rate) {
    if (!(rate >= 0 && rate <= 1)) {
      throw new IllegalArgumentException(name + " must be a number from 0 to 1, got " + rate);
    }
  }

  public Map<String, Object> toJson() {
    return Json.document("provider_timeout_after_commit_rate", timeoutAfterCommitRate,
        "provider_error_rate", errorRate, "provider_latency_ms", latencyMs, "provider_refusal_rate", refusalRate);
  }
}
