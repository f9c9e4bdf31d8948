package dev.idem.core;

/** A key, scope or operation failed validation. Maps to 400 {@code VALIDATION.idempotency_key_invalid}. */
public class InvalidKeyException extends IdemException {
  private static final long serialVersionUID = 1L;

  public InvalidKeyException(String message) {
    super(message);
  }
}
