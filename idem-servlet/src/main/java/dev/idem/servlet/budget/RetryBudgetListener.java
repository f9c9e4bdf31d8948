package dev.idem.servlet.budget;

/**
 * Hears what a {@link RetryBudgetFilter} decides about retries, for meters and logs. Called on the request thread, so
 * implementations must be quick, thread-safe and must not throw (an exception is logged and ignored). First attempts
 * are not reported: they are never refused, and {@link RetryBudgetFilter#retryShare()} already covers them.
 */
public interface RetryBudgetListener {
  /** A listener that does nothing. */
  static RetryBudgetListener none() {
    return new RetryBudgetListener() {};
  }

  /**
   * A retry was admitted and goes on to the rest of the chain.
   *
   * @param name the filter's name
   * @param attempt the attempt number the client sent (2 or more)
   */
  default void onRetryAdmitted(String name, int attempt) {}

  /**
   * A retry was refused with 503 {@code TRANSIENT.retry_budget_exhausted} before any work was done.
   *
   * @param name the filter's name
   * @param attempt the attempt number the client sent (2 or more)
   */
  default void onRetryShed(String name, int attempt) {}
}
