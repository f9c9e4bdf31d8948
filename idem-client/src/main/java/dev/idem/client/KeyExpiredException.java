package dev.idem.client;

import dev.idem.core.IdemException;
import java.util.List;

/**
 * The server answered {@code CONFLICT.idempotency.key_expired} (422): the key's first request was answered, but so long
 * ago that the answer is no longer kept; only a tombstone says the key was used. Never retried, and the intent is
 * completed in the journal: what the first request did is for the caller to find out (look the resource up), and a new
 * attempt at the intent needs a new key. Carries the key, the status, the server's problem {@code detail} and, when the
 * server gave it, when the key's answer expired.
 */
public class KeyExpiredException extends IdemException {
  private static final long serialVersionUID = 1L;
  private final String key;
  private final int status;
  private final String detail;
  private final String expiredAt;
  private final transient List<Attempt> attempts;

  public KeyExpiredException(String client, String key, int status, String detail, String expiredAt,
      List<Attempt> attempts) {
    super(client + ": key '" + key + "' was used before and its answer has expired (HTTP " + status
        + " CONFLICT.idempotency.key_expired" + (expiredAt != null ? ", expired at " + expiredAt : "")
        + "). Not retried; the first request's effect stands: look it up, and send any new request with a new key.");
    this.key = key;
    this.status = status;
    this.detail = detail;
    this.expiredAt = expiredAt;
    this.attempts = List.copyOf(attempts);
  }

  public String key() {
    return key;
  }

  public int status() {
    return status;
  }

  /** The problem document's {@code detail}, or null. */
  public String detail() {
    return detail;
  }

  /** The problem document's {@code expired_at} (an ISO-8601 instant), or null. */
  public String expiredAt() {
    return expiredAt;
  }

  /** The attempt log. */
  public List<Attempt> attempts() {
    return attempts;
  }
}
