package dev.idem.examples.payments.ledger;

import dev.idem.examples.payments.web.Json;
import java.util.Map;

/**
 * A tenant's ledger in figures: captured payments and succeeded refunds as booked, and the number of entries (two
 * per payment and two per refund when the books are right). Amounts are in minor units, summed over currencies.
 *
 * @param balanced whether debits and credits sum to the same amount
 */
public record LedgerSummary(long payments, long refunds, long capturedAmount, long refundedAmount, long entries,
    boolean balanced) {

  public Map<String, Object> toJson() {
    return Json.document("payments", payments, "refunds", refunds, "captured_amount", capturedAmount,
        "refunded_amount", refundedAmount, "entries", entries, "balanced", balanced);
  }
}
