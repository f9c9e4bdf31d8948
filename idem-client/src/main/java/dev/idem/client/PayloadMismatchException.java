package dev.idem.client;

import java.util.List;

/**
 * The server answered {@code CONFLICT.idempotency.payload_mismatch} (422, or 409 when so configured): the key was
 * first used with a different request. Never retried; the intent is completed in the journal. Send the new request
 * with a new key. {@link #detail()} names the fields that differ.
 */
public class PayloadMismatchException extends KeyRefusedException {
  private static final long serialVersionUID = 1L;

  public PayloadMismatchException(String client, String key, int status, String detail, List<Attempt> attempts) {
    super(client + ": key '" + key + "' was first used with a different request (HTTP " + status
        + " CONFLICT.idempotency.payload_mismatch" + (detail != null ? ": " + detail : "")
        + "). Not retried; send the new request with a new key.", key, status, detail, attempts);
  }
}
