package dev.idem.examples.payments.provider;

import dev.idem.examples.payments.web.Json;
import java.time.Instant;
import java.util.Map;

/** A refund as the provider recorded it; it always succeeds once accepted. */
public record ProviderRefund(String id, String chargeId, long amount, String status, Instant createdAt) {
  public static final String SUCCEEDED = "succeeded";

  public Map<String, Object> toJson() {
    return Json.document("id", id, "charge_id", chargeId, "amount", amount, "status", status,
        "created_at", createdAt.toString());
  }
}
