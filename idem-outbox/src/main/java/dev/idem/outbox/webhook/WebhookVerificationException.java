package dev.idem.outbox.webhook;

import dev.idem.core.IdemException;

/** A webhook was refused before any work: its message says why, without echoing secrets or signatures. */
public final class WebhookVerificationException extends IdemException {
  /** Why a webhook was refused. */
  public enum Reason {
    /** A {@code webhook-id}, {@code webhook-timestamp} or {@code webhook-signature} header is missing or malformed. */
    MALFORMED_HEADERS,
    /** The timestamp is outside the tolerance: a stale or replayed message, or a clock far off. */
    TIMESTAMP_OUT_OF_TOLERANCE,
    /** No signature matched any secret: forged, tampered with, or signed with an unknown secret. */
    SIGNATURE_MISMATCH,
    /** The body is larger than the receiver accepts. */
    BODY_TOO_LARGE
  }

  private final Reason reason;

  public WebhookVerificationException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
