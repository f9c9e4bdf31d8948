package dev.idem.examples.payments.provider;

import dev.idem.examples.payments.web.Json;
import java.util.Map;

/**
 * What the provider has seen: distinct charges and refunds (one per idempotency key), and how many calls repeated a
 * key it already had (each answered with the original instead of charging again).
 */
public record ProviderStats(long charges, long declinedCharges, long refunds, long duplicateChargeAttempts,
    long duplicateRefundAttempts) {

  public Map<String, Object> toJson() {
    return Json.document("charges", charges, "declined_charges", declinedCharges, "refunds", refunds,
        "duplicate_charge_attempts", duplicateChargeAttempts, "duplicate_refund_attempts", duplicateRefundAttempts);
  }
}
