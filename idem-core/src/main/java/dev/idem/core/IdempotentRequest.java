package dev.idem.core;

import dev.idem.core.fingerprint.Fingerprint;
import java.util.Objects;

/**
 * One incoming request as the executor sees it: who sent it (scope), what it is for (operation), its key, and
 * either its body (fingerprinted per the operation's policy) or a fingerprint computed by the caller. Immutable.
 */
public final class IdempotentRequest {
  private final RecordKey recordKey;
  private final byte[] body;
  private final String contentType;
  private final Fingerprint fingerprint;
  private final boolean firstAttempt;

  private IdempotentRequest(RecordKey recordKey, byte[] body, String contentType, Fingerprint fingerprint,
      boolean firstAttempt) {
    this.recordKey = Objects.requireNonNull(recordKey, "recordKey");
    this.body = body;
    this.contentType = contentType;
    this.fingerprint = fingerprint;
    this.firstAttempt = firstAttempt;
  }

  /** A request with a JSON body (or an empty one). */
  public static IdempotentRequest of(Scope scope, Operation operation, IdempotencyKey key, byte[] body) {
    return of(new RecordKey(scope, operation, key), body, "application/json");
  }

  /**
   * A request with a body of the given media type; JSON types ({@code application/json}, {@code *+json}, or
   * {@code null}) are canonicalised before hashing, others are hashed raw.
   */
  public static IdempotentRequest of(RecordKey recordKey, byte[] body, String contentType) {
    Objects.requireNonNull(body, "body");
    return new IdempotentRequest(recordKey, body.clone(), contentType, null, false);
  }

  /** A request whose fingerprint the caller computed (a message consumer, say). */
  public static IdempotentRequest withFingerprint(RecordKey recordKey, Fingerprint fingerprint) {
    return new IdempotentRequest(recordKey, null, null, Objects.requireNonNull(fingerprint, "fingerprint"), false);
  }

  /**
   * This request with a fingerprint the caller already computed from its body (an HTTP layer that validated the
   * JSON while hashing it, say). The body stays available to phases.
   */
  public IdempotentRequest fingerprinted(Fingerprint fingerprint) {
    return new IdempotentRequest(recordKey, body, contentType, Objects.requireNonNull(fingerprint, "fingerprint"),
        firstAttempt);
  }

  /**
   * This request, saying whether its sender makes its first attempt with the key (an attempt counter of its own, the
   * {@code Idempotency-Attempt} header idem-client sends). A first attempt is unlikely to be a duplicate: in atomic
   * mode it skips the look-up before the work, in phased mode the one before the first phase, and lets the record's
   * unique key decide, as {@link OperationPolicy#lookupFirst()} off does for every request, while later attempts
   * still look the record up first (on a transactional store; others always claim first). A duplicate that says it is
   * a first attempt (two senders, one key) runs the work (or the first phase) too, collides when its record is
   * inserted, rolls that transaction back and answers from the record (a replay, or in phased mode possibly
   * {@code IN_PROGRESS} or a resumption): exactly one execution commits either way.
   */
  public IdempotentRequest firstAttempt(boolean first) {
    return new IdempotentRequest(recordKey, body, contentType, fingerprint, first);
  }

  /** Whether the sender said this is its first attempt ({@link #firstAttempt(boolean)}); false unless it did. */
  public boolean isFirstAttempt() {
    return firstAttempt;
  }

  public RecordKey recordKey() {
    return recordKey;
  }

  public Scope scope() {
    return recordKey.scope();
  }

  public Operation operation() {
    return recordKey.operation();
  }

  public IdempotencyKey key() {
    return recordKey.key();
  }

  /** The body, or an empty array for requests made {@link #withFingerprint}. */
  public byte[] body() {
    return body == null ? new byte[0] : body.clone();
  }

  public String contentType() {
    return contentType;
  }

  /** The caller's fingerprint, or {@code null} when the executor computes it from the body. */
  public Fingerprint fingerprint() {
    return fingerprint;
  }

  @Override
  public String toString() {
    return "IdempotentRequest[" + recordKey + (body == null ? "" : ", " + body.length + " bytes") + "]";
  }
}
