package dev.idem.retry;

/**
 * Root of every exception idem-retry throws. Unchecked. {@link #attempts()} tells how many attempts were made before
 * the operation ended (0 when it ended before the first).
 */
public class RetryException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int attempts;

  protected RetryException(String message, int attempts, Throwable cause) {
    super(message, cause);
    this.attempts = attempts;
  }

  /** Attempts made before the operation ended. */
  public int attempts() {
    return attempts;
  }
}
