package dev.idem.retry;

/** The {@link CircuitBreaker} refused the attempt; the operation was not called. */
public class CircuitOpenException extends RetryException {
  private static final long serialVersionUID = 1L;
  private final transient CircuitBreaker circuitBreaker;

  public CircuitOpenException(String name, int attempts, CircuitBreaker circuitBreaker, Throwable lastCause) {
    super(
        name + ": " + circuitBreaker + " refused attempt " + (attempts + 1) + " (state " + circuitBreaker.state()
            + "); the operation was not called. It will be let through again after the open duration.",
        attempts,
        lastCause);
    this.circuitBreaker = circuitBreaker;
  }

  /** The breaker that refused. */
  public CircuitBreaker circuitBreaker() {
    return circuitBreaker;
  }
}
