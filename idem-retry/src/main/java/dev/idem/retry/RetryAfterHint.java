package dev.idem.retry;

import java.time.Duration;
import java.util.Optional;

/**
 * Implemented by a failure (an exception) that carries a server's {@code Retry-After} hint. {@link Retry} uses the
 * hint as a floor on the next delay; results carry hints through {@link RetryPolicy.Builder#retryAfter}.
 */
public interface RetryAfterHint {
  /** The server's minimum delay before the next attempt, if it gave one. */
  Optional<Duration> retryAfter();
}
