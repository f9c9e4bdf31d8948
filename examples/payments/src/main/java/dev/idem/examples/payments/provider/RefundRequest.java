package dev.idem.examples.payments.provider;

import java.util.Objects;

/** What a refund asks the provider for: part or all of a charge. */
public record RefundRequest(String chargeId, long amount) {
  public RefundRequest {
    Objects.requireNonNull(chargeId, "chargeId");
    if (amount <= 0) {
      throw new IllegalArgumentException("amount must be positive, got " + amount);
    }
  }
}
