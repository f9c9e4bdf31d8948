package dev.idem.retry;

/**
 * The {@link RetryBudget} refused a retry: failures dominate at this destination, so this call stops retrying rather
 * than add load. The cause is the last attempt's failure (null when it returned a retryable result).
 */
public class RetryBudgetExhaustedException extends RetryException {
  private static final long serialVersionUID = 1L;

  public RetryBudgetExhaustedException(String name, int attempts, RetryBudget budget, Throwable lastCause) {
    super(
        name + ": retry budget refused retry " + attempts + " (" + budget + ", remaining " + budget.remaining()
            + "); failures dominate at this destination, so this call stops instead of adding load. Last failure: "
            + lastCause,
        attempts,
        lastCause);
  }
}
