package dev.idem.outbox;

import dev.idem.core.crypto.DecryptionException;
import java.time.Duration;

/**
 * Hooks for meters and logs on a relay's work. Called on relay threads; implementations must be fast, thread-safe
 * and must not throw (what they throw is ignored). Every method does nothing by default.
 */
public interface OutboxListener {
  /** A relay claimed {@code count} events in one batch. */
  default void claimed(String relay, int count) {}

  /** A transport accepted {@code message}, {@code sinceEnqueue} after it was enqueued. */
  default void delivered(String relay, OutboxMessage message, Duration sinceEnqueue) {}

  /** An attempt failed; {@code dead} when it was the last one. */
  default void failed(String relay, OutboxMessage message, DeliveryResult result, boolean dead) {}

  /**
   * A sealed payload did not open ({@code error.reason()} says why: tampered with, an unknown key, not an envelope):
   * the event was not sent and is dead ({@link #failed} is called for it too). Count it and alert: it needs an
   * operator (restore the key, or discard the event).
   */
  default void decryptionFailed(String relay, OutboxMessage message, DecryptionException error) {}

  /** A marking found a row no longer leased to this relay (its lease ran out and another relay took it). */
  default void leaseLost(String relay, int rows) {}

  /**
   * The relay could not reach the database or a transport threw unexpectedly; it backs off and carries on. Also
   * called, with the error, when an error of the JVM's own ({@link OutOfMemoryError}, {@link InternalError}; not
   * {@link StackOverflowError}) ends one of the relay's workers.
   */
  default void relayError(String relay, Throwable error) {}
}
