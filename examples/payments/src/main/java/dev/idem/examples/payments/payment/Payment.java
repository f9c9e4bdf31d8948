package dev.idem.examples.payments.payment;

import dev.idem.examples.payments.web.Json;
import dev.idem.servlet.conditional.ETag;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/**
 * A payment of one tenant.
 *
 * @param status {@code pending} (created, not yet charged), {@code captured}, {@code declined} or {@code failed}
 *     (the provider refused the charge for good; nothing was charged)
 * @param providerChargeId the provider's charge, once charged
 * @param refundedAmount the amount refunded or reserved by refunds in flight
 * @param metadata the tenant's own labels, changed by {@code PATCH /payments/{id}}
 * @param version incremented by every write of the payment: its {@link #etag()}
 */
public record Payment(String id, String tenant, String accountId, long amount, String currency, String description,
    String status, String providerChargeId, long refundedAmount, Instant createdAt, Map<String, String> metadata,
    long version) {
  public static final String PENDING = "pending";
  public static final String CAPTURED = "captured";
  public static final String DECLINED = "declined";
  public static final String FAILED = "failed";

  public Payment {
    metadata = Map.copyOf(metadata);
  }

  /** A new payment: no metadata, version 1. */
  public Payment(String id, String tenant, String accountId, long amount, String currency, String description,
      String status, String providerChargeId, long refundedAmount, Instant createdAt) {
    this(id, tenant, accountId, amount, currency, description, status, providerChargeId, refundedAmount, createdAt,
        Map.of(), 1);
  }

  /** What is left to refund. */
  public long refundable() {
    return CAPTURED.equals(status) ? amount - refundedAmount : 0;
  }

  /** The strong entity-tag of this version of the payment. */
  public ETag etag() {
    return ETag.ofVersion(version);
  }

  public Map<String, Object> toJson() {
    return Json.document("id", id, "account_id", accountId, "amount", amount, "currency", currency,
        "description", description, "metadata", new TreeMap<>(metadata), "status", status,
        "provider_charge_id", providerChargeId, "refunded_amount", refundedAmount, "created_at",
        createdAt.toString());
  }
}
