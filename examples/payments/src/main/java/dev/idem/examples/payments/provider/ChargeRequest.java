package dev.idem.examples.payments.provider;

import java.util.Objects;

/** What a charge asks the provider for. */
public record ChargeRequest(String accountId, long amount, String currency) {
  public ChargeRequest {
    Objects.requireNonNull(accountId, "accountId");
    Objects.requireNonNull(currency, "currency");
    if (amount <= 0) {
      throw new IllegalArgumentException("amount must be positive, got " + amount);
    }
  }
}
