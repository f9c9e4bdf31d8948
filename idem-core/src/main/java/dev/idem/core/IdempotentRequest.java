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

  private IdempotentRequest(RecordKey recordKey, byte[] body, String contentType, Fingerprint fingerprint) {
    this.recordKey = Objects.requireNonNull(recordKey, "recordKey");
    this.body = body;
    this.contentType = contentType;
    this.fingerprint = fingerprint;
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
    return new IdempotentRequest(recordKey, body.clone(), contentType, null);
  }

  /** A request whose fingerprint the caller computed (a message consumer, say). */
  public static IdempotentRequest withFingerprint(RecordKey recordKey, Fingerprint fingerprint) {
    return new IdempotentRequest(recordKey, null, null, Objects.requireNonNull(fingerprint, "fingerprint"));
  }

  /**
   * This request with a fingerprint the caller already computed from its body (an HTTP layer that validated the
   * JSON while hashing it, say). The body stays available to phases.
   */
  public IdempotentRequest fingerprinted(Fingerprint fingerprint) {
    return new IdempotentRequest(recordKey, body, contentType, Objects.requireNonNull(fingerprint, "fingerprint"));
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
