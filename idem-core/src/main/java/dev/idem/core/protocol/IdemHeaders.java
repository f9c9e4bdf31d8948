package dev.idem.core.protocol;

/** The names of the HTTP headers of Idem's contract, each defined here once. */
public final class IdemHeaders {
  /** The request's idempotency key (an RFC 8941 string or a bare key); the server echoes it on its answers. */
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  /** On an answer to an idempotent request: {@code stored} (kept for replay) or {@code replayed}. */
  public static final String IDEMPOTENCY_STATUS = "Idempotency-Status";
  /** {@code true} on a replayed answer. */
  public static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";
  /** The attempt number (1, 2, ...) that {@code IdempotentHttpClient} sends on every attempt. */
  public static final String IDEMPOTENCY_ATTEMPT = "Idempotency-Attempt";
  /** The milliseconds the client will still wait for the answer (deadline propagation). */
  public static final String REQUEST_TIMEOUT = "Request-Timeout";
  /** When to retry: delay-seconds or an HTTP-date (RFC 9110), on 409 in progress, 503 and 429 answers. */
  public static final String RETRY_AFTER = "Retry-After";

  private IdemHeaders() {}
}
