package dev.idem.examples.payments.provider;

/**
 * The call timed out: the caller cannot know whether the provider applied it (it may have committed). Calling again
 * with the same idempotency key is safe and returns the original outcome.
 */
public final class ProviderTimeoutException extends ProviderException {
  private static final long serialVersionUID = 1L;

  public ProviderTimeoutException(String message) {
    super(message);
  }
}
