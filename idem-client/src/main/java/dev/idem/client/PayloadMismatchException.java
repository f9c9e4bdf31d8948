package dev.idem.client;

import dev.idem.core.IdemException;
import java.util.List;

/**
 * The server answered {@code CONFLICT.idempotency.payload_mismatch} (422, or 409 when so configured): the key was
 * first used with a different request. Never retried; the intent is completed in the journal. Send the new request
 * with a new key. Carries the key, the status and the server's problem {@code detail}.
 */
public class PayloadMismatchException extends IdemException {
  private static final long serialVersionUID = 1L;
  private final String key;
  private final int status;
  private final String detail;
  private final transient List<Attempt> attempts;

  public PayloadMismatchException(String client, String key, int status, String detail, List<Attempt> attempts) {
    super(client + ": key '" + key + "' was first used with a different request (HTTP " + status
        + " CONFLICT.idempotency.payload_mismatch" + (detail != null ? ": " + detail : "")
        + "). Not retried; send the new request with a new key.");
    this.key = key;
    this.status = status;
    this.detail = detail;
    this.attempts = List.copyOf(attempts);
  }

  public String key() {
    return key;
  }

  public int status() {
    return status;
  }

  /** The problem document's {@code detail} (it names the fields that differ), or null. */
  public String detail() {
    return detail;
  }

  /** The attempt log. */
  public List<Attempt> attempts() {
    return attempts;
  }
}
