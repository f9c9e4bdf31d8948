package dev.idem.examples.payments.payment;

import dev.idem.examples.payments.web.Json;
import java.time.Instant;
import java.util.Map;

/**
 * A payment of one tenant.
 *
 * @param status {@code pending} (created, not yet charged), {@code captured} or {@code declined}
 * @param providerChargeId the provider's charge, once charged
 * @param refundedAmount the amount refunded or reserved by refunds in flight
 */
public record Payment(String id, String tenant, String accountId, long amount, String currency, String description,
    String status, String providerChargeId, long refundedAmount, Instant createdAt) {
  public static final String PENDING = "pending";
  public static final String CAPTURED = "captured";
  public static final String DECLINED = "declined";

  /** What is left to refund. */
  public long refundable() {
    return CAPTURED.equals(status) ? amount - refundedAmount : 0;
  }

  public Map<String, Object> toJson() {
    return Json.document("id", id, "account_id", accountId, "amount", amount, "currency", currency,
        "description", description, "status", status, "provider_charge_id", providerChargeId,
        "refunded_amount", refundedAmount, "created_at", createdAt.toString());
  }
}
