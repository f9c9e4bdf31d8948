package dev.idem.examples.payments.provider;

import dev.idem.examples.payments.web.Json;
import java.util.Map;

/**
 * The faults the simulated provider injects into every call.
 *
 * @param timeoutAfterCommitRate probability (0..1) that a call is applied and committed, and the caller then gets a
 *     timeout
 * @param errorRate probability (0..1) that a call fails before anything is applied
 * @param latencyMs delay added to every call, 0..60000
 */
public record ProviderFaults(double timeoutAfterCommitRate, double errorRate, long latencyMs) {
  public static final long MAX_LATENCY_MS = 60_000;

  /** @throws IllegalArgumentException naming the field and its value when one is out of range */
  public ProviderFaults {
    checkRate("provider_timeout_after_commit_rate", timeoutAfterCommitRate);
    checkRate("provider_error_rate", errorRate);
    if (latencyMs < 0 || latencyMs > MAX_LATENCY_MS) {
      throw new IllegalArgumentException("provider_latency_ms must be 0.." + MAX_LATENCY_MS + ", got " + latencyMs);
    }
  }

  public static ProviderFaults none() {
    return new ProviderFaults(0, 0, 0);
  }

  private static void checkRate(String name, double rate) {
    if (!(rate >= 0 && rate <= 1)) {
      throw new IllegalArgumentException(name + " must be a number from 0 to 1, got " + rate);
    }
  }

  public Map<String, Object> toJson() {
    return Json.document("provider_timeout_after_commit_rate", timeoutAfterCommitRate,
        "provider_error_rate", errorRate, "provider_latency_ms", latencyMs);
  }
}
