package dev.idem.examples.payments.provider;

/** The provider refused the call before doing anything (an outage); calling again later may succeed. */
public final class ProviderUnavailableException extends ProviderException {
  private static final long serialVersionUID = 1L;

  public ProviderUnavailableException(String message) {
    super(message);
  }
}
