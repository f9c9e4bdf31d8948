package dev.idem.core.protocol;

import java.util.OptionalInt;
import java.util.Set;

/** The names of the HTTP headers of Idem's contract, each defined here once. */
public final class IdemHeaders {
  /** The request's idempotency key (an RFC 8941 string or a bare key); the server echoes it on its answers. */
  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  /** On an answer to an idempotent request: {@code stored} (kept for replay) or {@code replayed}. */
  public static final String IDEMPOTENCY_STATUS = "Idempotency-Status";
  /** {@code true} on a replayed answer. */
  public static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";
  /**
   * The attempt number (1, 2, ...) that {@code IdempotentHttpClient} sends on every attempt; read it with
   * {@link #attempt(String)}.
   */
  public static final String IDEMPOTENCY_ATTEMPT = "Idempotency-Attempt";
  /**
   * The response headers kept for replays unless configured otherwise ({@code Content-Type} is always kept; credentials
   * and cookies never are): where the created resource is, how its body is encoded and named, its validators, links.
   */
  public static final Set<String> KEPT_BY_DEFAULT = Set.of("Location", "Content-Language", "Content-Location",
      "Content-Encoding", "Content-Disposition", "ETag", "Last-Modified", "Link");
  /** The largest attempt number {@link #attempt(String)} takes; a client's retries never come near it. */
  public static final int MAX_ATTEMPT = 1000;
  /** The milliseconds the client will still wait for the answer (deadline propagation). */
  public static final String REQUEST_TIMEOUT = "Request-Timeout";
  /** When to retry: delay-seconds or an HTTP-date (RFC 9110), on 409 in progress, 503 and 429 answers. */
  public static final String RETRY_AFTER = "Retry-After";

  private IdemHeaders() {}

  /**
   * The attempt number in an {@value #IDEMPOTENCY_ATTEMPT} header's value: a decimal number from 1 to
   * {@value #MAX_ATTEMPT}, leading zeros allowed, surrounding whitespace ignored. Empty when the value is absent or
   * anything else (a sign, a fraction, other characters or digits of other scripts, a larger number): such a value is
   * no attempt number at all. The one reading of the header for every part of Idem that uses it.
   */
  public static OptionalInt attempt(String value) {
    if (value == null) {
      return OptionalInt.empty();
    }
    String digits = value.trim();
    if (digits.isEmpty()) {
      return OptionalInt.empty();
    }
    int n = 0;
    for (int i = 0; i < digits.length(); i++) {
      char c = digits.charAt(i);
      if (c < '0' || c > '9') {
        return OptionalInt.empty();
      }
      n = n * 10 + (c - '0');
      if (n > MAX_ATTEMPT) {
        return OptionalInt.empty();
      }
    }
    return n >= 1 ? OptionalInt.of(n) : OptionalInt.empty();
  }
}
