package dev.idem.client;

import dev.idem.core.IdemException;
import java.util.List;

/**
 * The server refused the key for good: the call ends after one attempt, is never retried, and the intent is completed
 * in the journal; a new request needs a new key. {@link PayloadMismatchException} (the key was first used with
 * another request) and {@link KeyExpiredException} (the key's answer is no longer kept) say why. Carries the key, the
 * status, the server's problem {@code detail} and the attempt log.
 */
public abstract class KeyRefusedException extends IdemException {
  private static final long serialVersionUID = 1L;
  private final String key;
  private final int status;
  private final String detail;
  private final transient List<Attempt> attempts;

  protected KeyRefusedException(String message, String key, int status, String detail, List<Attempt> attempts) {
    super(message);
    this.key = key;
    this.status = status;
    this.detail = detail;
    this.attempts = List.copyOf(attempts);
  }

  public String key() {
    return key;
  }

  public int status() {
    return status;
  }

  /** The problem document's {@code detail}, or null. */
  public String detail() {
    return detail;
  }

  /** The attempt log. */
  public List<Attempt> attempts() {
    return attempts;
  }
}
