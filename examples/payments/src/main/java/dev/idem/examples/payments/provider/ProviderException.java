package dev.idem.examples.payments.provider;

/** A call to the provider failed. Checked, so that every caller decides what the failure means for it. */
public abstract class ProviderException extends Exception {
  private static final long serialVersionUID = 1L;

  ProviderException(String message) {
    super(message);
  }
}
