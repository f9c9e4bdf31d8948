package dev.idem.core.crypto;

import dev.idem.core.IdemException;

/**
 * Sealed data could not be opened, for good: it was tampered with or moved to another place, its key id is unknown,
 * or it is not an envelope at all. Never retryable, never a reason to run the work again: the caller reports it (the
 * servlet filter answers a 500 problem that says so) and counts it. {@link #reason()} says which.
 */
public final class DecryptionException extends IdemException {
  private static final long serialVersionUID = 1L;

  /** Why the data could not be opened. */
  public enum Reason {
    /** The ciphertext, its header or its associated data does not authenticate. */
    TAMPERED,
    /** The key id in the envelope is not known to the key provider. */
    UNKNOWN_KEY,
    /** The bytes are not an envelope this version can read. */
    MALFORMED
  }

  private final Reason reason;
  private final String keyId;

  public DecryptionException(Reason reason, String keyId, String message) {
    super(message);
    this.reason = reason;
    this.keyId = keyId;
  }

  public DecryptionException(Reason reason, String keyId, String message, Throwable cause) {
    super(message, cause);
    this.reason = reason;
    this.keyId = keyId;
  }

  public Reason reason() {
    return reason;
  }

  /** The key id the envelope names, or {@code null} when it could not be read. */
  public String keyId() {
    return keyId;
  }
}
