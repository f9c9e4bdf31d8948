package dev.idem.retry;

/**
 * Every allowed attempt failed. Carries the number of attempts, the last failure ({@link #getCause()}, null when the
 * last attempt returned a result classified as retryable) and that result ({@link #lastResult()}).
 */
public class RetryExhaustedException extends RetryException {
  private static final long serialVersionUID = 1L;
  private final transient Object lastResult;

  public RetryExhaustedException(String name, int attempts, Throwable lastCause, Object lastResult) {
    super(
        name + ": gave up after " + attempts + " attempt" + (attempts == 1 ? "" : "s") + "; last "
            + (lastCause != null ? "failure: " + lastCause : "result (classified retryable): " + lastResult)
            + ". Raise maxAttempts, or fix what fails.",
        attempts,
        lastCause);
    this.lastResult = lastResult;
  }

  /** The last attempt's result when it was classified retryable; null when the last attempt threw. */
  public Object lastResult() {
    return lastResult;
  }
}
