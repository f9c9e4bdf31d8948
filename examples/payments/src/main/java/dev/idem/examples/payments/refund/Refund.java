package dev.idem.examples.payments.refund;

import dev.idem.examples.payments.web.Json;
import java.time.Instant;
import java.util.Map;

/**
 * A refund of part or all of a captured payment.
 *
 * @param status {@code pending} (amount reserved, provider not yet called), {@code succeeded} or {@code failed}
 *     (the provider refused it for good; the reserved amount was given back to the payment)
 */
public record Refund(String id, String tenant, String paymentId, long amount, String currency, String status,
    String providerRefundId, Instant createdAt) {
  public static final String PENDING = "pending";
  public static final String SUCCEEDED = "succeeded";
  public static final String FAILED = "failed";

  public Map<String, Object> toJson() {
    return Json.document("id", id, "payment_id", paymentId, "amount", amount, "currency", currency,
        "status", status, "provider_refund_id", providerRefundId, "created_at", createdAt.toString());
  }
}
