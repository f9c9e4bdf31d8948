package dev.idem.retry;

/**
 * The operation ended without exhausting its attempts for a reason that is not a retry decision: a checked exception
 * classified as not retryable (the cause; unchecked ones are rethrown as they are), or an interrupt while waiting
 * (the interrupt flag is restored).
 */
public class RetryAbortedException extends RetryException {
  private static final long serialVersionUID = 1L;

  public RetryAbortedException(String message, int attempts, Throwable cause) {
    super(message, attempts, cause);
  }
}
