package dev.idem.core;

import java.time.Instant;

/**
 * The key's answer expired, but the key is still retained: the request may have run already, so it does not run
 * again, and its answer is no longer kept. Never retry with this key: if the request is still wanted, check whether
 * it took effect, then send it with a new key. Maps to 422 {@code CONFLICT.idempotency.key_expired}. Immutable.
 */
public class KeyExpiredException extends IdemException {
  private static final long serialVersionUID = 1L;

  private final transient RecordKey key;
  private final Instant expiredAt;

  public KeyExpiredException(RecordKey key, Instant expiredAt) {
    super("the answer to key '" + key.key() + "' of " + key.operation() + " expired at " + expiredAt
        + "; the request is not run again. Use a new key for a new request.");
    this.key = key;
    this.expiredAt = expiredAt;
  }

  public RecordKey key() {
    return key;
  }

  /** When the key's answer stopped being kept. */
  public Instant expiredAt() {
    return expiredAt;
  }
}
