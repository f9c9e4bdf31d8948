package dev.idem.client.spi;

import dev.idem.client.Attempt;

/**
 * Told about every attempt of an {@link dev.idem.client.IdempotentHttpClient} once its outcome is known. Called on the
 * calling thread; implementations must be thread-safe and fast, and must not throw.
 */
@FunctionalInterface
public interface AttemptListener {
  /** The listener that does nothing. */
  AttemptListener NO_OP = (client, key, attempt) -> {};

  /**
   * @param client the client's name
   * @param key the intent's idempotency key, or null for a request without one
   * @param attempt the attempt's log line
   */
  void onAttempt(String client, String key, Attempt attempt);
}
