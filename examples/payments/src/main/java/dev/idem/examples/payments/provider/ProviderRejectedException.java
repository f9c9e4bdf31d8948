package dev.idem.examples.payments.provider;

/**
 * The provider refused the call for good: an idempotency key reused with other parameters, an unknown charge, a
 * refund beyond what the charge has left. Calling again gives the same answer.
 */
public final class ProviderRejectedException extends ProviderException {
  private static final long serialVersionUID = 1L;

  private final String code;

  public ProviderRejectedException(String code, String message) {
    super(message);
    this.code = code;
  }

  /** The problem code, such as {@code PROVIDER.idempotency_key_reused}. */
  public String code() {
    return code;
  }
}
