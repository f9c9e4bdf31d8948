package dev.idem.client;

import java.util.List;

/**
 * The server answered {@code CONFLICT.idempotency.key_expired} (422): the key's first request was answered, but so long
 * ago that the answer is no longer kept; only a tombstone says the key was used. Never retried, and the intent is
 * completed in the journal: what the first request did is for the caller to find out (look the resource up), and a new
 * attempt at the intent needs a new key. {@link #expiredAt()} says when the answer expired, when the server gave it.
 */
public class KeyExpiredException extends KeyRefusedException {
  private static final long serialVersionUID = 1L;
  private final String expiredAt;

  public KeyExpiredException(String client, String key, int status, String detail, String expiredAt,
      List<Attempt> attempts) {
    super(client + ": key '" + key + "' was used before and its answer has expired (HTTP " + status
        + " CONFLICT.idempotency.key_expired" + (expiredAt != null ? ", expired at " + expiredAt : "")
        + "). Not retried; the first request's effect stands: look it up, and send any new request with a new key.",
        key, status, detail, attempts);
    this.expiredAt = expiredAt;
  }

  /** The problem document's {@code expired_at} (an ISO-8601 instant), or null. */
  public String expiredAt() {
    return expiredAt;
  }
}
