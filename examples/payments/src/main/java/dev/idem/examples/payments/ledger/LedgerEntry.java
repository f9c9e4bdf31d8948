package dev.idem.examples.payments.ledger;

import dev.idem.examples.payments.web.Json;
import java.time.Instant;
import java.util.Map;

/**
 * One side of a double entry.
 *
 * @param direction {@code debit} or {@code credit}
 * @param referenceType {@code payment} or {@code refund}
 * @param referenceId the payment or refund the entry books; with the direction, unique
 */
public record LedgerEntry(String id, String tenant, String accountId, String direction, long amount, String currency,
    String referenceType, String referenceId, Instant createdAt) {
  public static final String DEBIT = "debit";
  public static final String CREDIT = "credit";

  public Map<String, Object> toJson() {
    return Json.document("id", id, "account_id", accountId, "direction", direction, "amount", amount,
        "currency", currency, "reference_type", referenceType, "reference_id", referenceId,
        "created_at", createdAt.toString());
  }
}
