package dev.idem.examples.payments.provider;

import dev.idem.examples.payments.web.Json;
import java.time.Instant;
import java.util.Map;

/**
 * A charge as the provider recorded it.
 *
 * @param status {@code succeeded} or {@code declined}
 */
public record ProviderCharge(String id, String accountId, long amount, String currency, String status,
    Instant createdAt) {
  public static final String SUCCEEDED = "succeeded";
  public static final String DECLINED = "declined";

  public boolean declined() {
    return DECLINED.equals(status);
  }

  public Map<String, Object> toJson() {
    return Json.document("id", id, "account_id", accountId, "amount", amount, "currency", currency,
        "status", status, "created_at", createdAt.toString());
  }
}
