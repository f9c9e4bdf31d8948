package dev.idem.core.protocol;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A problem code of Idem's HTTP contract: the {@code code} member of an RFC 9457 problem document, with the HTTP
 * status, the {@code retryable} member and the title it is answered with. Immutable; two codes are equal when their
 * {@link #code()} is. Applications define their own with {@link #of}; the constants are the codes Idem's own modules
 * write.
 *
 * <pre>{@code
 * static final ProblemCode DECLINED = ProblemCode.of("PAYMENT.declined", 402, false, "Payment declined");
 * }</pre>
 */
public final class ProblemCode {
  private static final Pattern FORMAT = Pattern.compile("[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)+");

  /** 400: a request without the {@code Idempotency-Key} an idempotent route requires. */
  public static final ProblemCode IDEMPOTENCY_KEY_MISSING = of("VALIDATION.idempotency_key_missing", 400, false,
      "Idempotency-Key header is required");
  /** 400: an {@code Idempotency-Key} that is not a valid key. */
  public static final ProblemCode IDEMPOTENCY_KEY_INVALID = of("VALIDATION.idempotency_key_invalid", 400, false,
      "Idempotency-Key header is invalid");
  /** 400: a body declared as JSON that is not JSON. */
  public static final ProblemCode MALFORMED_JSON = of("VALIDATION.malformed_json", 400, false,
      "Request body is not valid JSON");
  /** 413: a request body above the limit. */
  public static final ProblemCode REQUEST_TOO_LARGE = of("VALIDATION.request_too_large", 413, false,
      "Request body too large");
  /** 415: a media type (or charset) the route does not take. */
  public static final ProblemCode MEDIA_TYPE = of("VALIDATION.media_type", 415, false, "Unsupported media type");
  /** 405: a method the resource does not take. */
  public static final ProblemCode METHOD_NOT_ALLOWED = of("VALIDATION.method_not_allowed", 405, false,
      "Method not allowed");
  /**
   * 400: a scope (from the request's authentication) that holds a control character or an unpaired surrogate, which
   * the store cannot hold.
   */
  public static final ProblemCode SCOPE_INVALID = of("VALIDATION.scope_invalid", 400, false, "Scope is invalid");
  /** 401: a request without a scope (no principal). */
  public static final ProblemCode UNAUTHENTICATED = of("AUTH.unauthenticated", 401, false,
      "Authentication required");
  /** 422 (or 409 where configured): a key reused with a different request. */
  public static final ProblemCode PAYLOAD_MISMATCH = of("CONFLICT.idempotency.payload_mismatch", 422, false,
      "Idempotency-Key reused with a different request");
  /**
   * 422: a key whose answer expired but which is still retained (see {@code OperationPolicy.retention}): the request
   * is not run again, and no retry with this key succeeds; a new request needs a new key. 422 like
   * {@link #PAYLOAD_MISMATCH}: the request is well formed but cannot be processed with this key. Not 410, which says
   * the target resource is gone (and is cacheable by default), when only the key is.
   */
  public static final ProblemCode KEY_EXPIRED = of("CONFLICT.idempotency.key_expired", 422, false,
      "Idempotency-Key expired");
  /**
   * 409, not retryable: the key's record is uncertain (its outside effect could not be confirmed within the
   * operation's resume cap). Nothing runs; a reconciler or an operator decides the record, after which the same
   * request replays the decision.
   */
  public static final ProblemCode OUTCOME_UNCERTAIN = of("CONFLICT.idempotency.outcome_uncertain", 409, false,
      "The outcome of the request with this Idempotency-Key is uncertain");
  /** 409, retryable: the first request with this key has not finished. */
  public static final ProblemCode IN_PROGRESS = of("CONFLICT.idempotency.in_progress", 409, true,
      "A request with this Idempotency-Key is in progress");
  /** 500: an answer larger than the server keeps. */
  public static final ProblemCode RESPONSE_TOO_LARGE = of("INTERNAL.response_too_large", 500, false,
      "Response too large to keep");
  /**
   * 500, not retryable: something before the idempotency filter (another filter, a framework) read the request body,
   * so the filter cannot tell this request from another with the same key; nothing runs. A fault of the server's
   * set-up (the order of its filters), not of the request.
   */
  public static final ProblemCode BODY_READ_BEFORE_FILTER = of("INTERNAL.body_read_before_filter", 500, false,
      "Request body read before the idempotency filter");
  /** 500: the store refused the request for a reason no retry fixes (a missing table). */
  public static final ProblemCode STORE_ERROR = of("INTERNAL.store_error", 500, false, "Idempotency store error");
  /**
   * 500: the kept answer for this key cannot be opened (tampered with, or sealed under a key the server no longer
   * holds). Never retryable, and nothing runs again: an operator must look at the record.
   */
  public static final ProblemCode RECORD_UNREADABLE = of("INTERNAL.record_unreadable", 500, false,
      "Kept answer unreadable");
  /** 503, retryable: a dependency (the idempotency store, the inbox) could not be reached. */
  public static final ProblemCode DEPENDENCY_UNAVAILABLE = of("DEPENDENCY.unavailable", 503, true,
      "Dependency unavailable");
  /** 503, retryable: the client's deadline is too short to start the request. */
  public static final ProblemCode DEPENDENCY_TIMEOUT = of("DEPENDENCY.timeout", 503, true,
      "The client's deadline passed before the request was served");
  /** 503, not retryable: the server's retry budget refuses this retry. */
  public static final ProblemCode RETRY_BUDGET_EXHAUSTED = of("TRANSIENT.retry_budget_exhausted", 503, false,
      "Retry budget exhausted");
  /** 400: a conditional request header that cannot be parsed. */
  public static final ProblemCode PRECONDITION_MALFORMED = of("VALIDATION.precondition_malformed", 400, false,
      "Malformed precondition");
  /** 412: a precondition that does not hold. */
  public static final ProblemCode PRECONDITION_FAILED = of("CONFLICT.precondition_failed", 412, false,
      "Precondition failed");
  /** 428: a request without the precondition the resource requires. */
  public static final ProblemCode PRECONDITION_REQUIRED = of("VALIDATION.precondition_required", 428, false,
      "Precondition required");
  /** 401: webhook headers missing or malformed. */
  public static final ProblemCode WEBHOOK_HEADERS_INVALID = of("AUTH.webhook_headers_invalid", 401, false,
      "Webhook headers missing or malformed");
  /** 401: a webhook timestamp outside the tolerance. */
  public static final ProblemCode WEBHOOK_TIMESTAMP_OUT_OF_TOLERANCE = of("AUTH.webhook_timestamp_out_of_tolerance",
      401, false, "Webhook timestamp out of tolerance");
  /** 401: a webhook whose signature does not verify. */
  public static final ProblemCode WEBHOOK_SIGNATURE_INVALID = of("AUTH.webhook_signature_invalid", 401, false,
      "Webhook signature invalid");
  /** 409: a webhook id seen before with another body. */
  public static final ProblemCode WEBHOOK_PAYLOAD_MISMATCH = of("CONFLICT.webhook.payload_mismatch", 409, false,
      "Webhook id reused with another body");
  /** 500, retryable: the webhook's handler failed. */
  public static final ProblemCode WEBHOOK_HANDLER_FAILED = of("TRANSIENT.webhook_handler_failed", 500, true,
      "Webhook handler failed");

  private final String code;
  private final int status;
  private final boolean retryable;
  private final String title;

  private ProblemCode(String code, int status, boolean retryable, String title) {
    this.code = code;
    this.status = status;
    this.retryable = retryable;
    this.title = title;
  }

  /**
   * Whether {@code code} has a problem code's form, {@code CATEGORY.name}: two or more dot-separated parts of ASCII
   * letters, digits and {@code _}. Such a code holds nothing that could break a log line or a header. False for null.
   */
  public static boolean isWellFormed(String code) {
    return code != null && FORMAT.matcher(code).matches();
  }

  /**
   * A problem code.
   *
   * @param code {@code CATEGORY.name}: two or more dot-separated parts of ASCII letters, digits and {@code _}
   * @param status the HTTP status it is answered with, 400..599
   * @param retryable whether a retry with the same request may succeed
   * @param title a short, human-readable summary that does not change from occurrence to occurrence
   * @throws IllegalArgumentException for a malformed code, a status outside 400..599 or a blank title
   */
  public static ProblemCode of(String code, int status, boolean retryable, String title) {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(title, "title");
    if (!isWellFormed(code)) {
      throw new IllegalArgumentException("a problem code is CATEGORY.name (dot-separated ASCII letters, digits and"
          + " '_'), got '" + code + "'");
    }
    if (status < 400 || status > 599) {
      throw new IllegalArgumentException("a problem's status must be 400..599, got " + status + " for " + code);
    }
    if (title.isBlank()) {
      throw new IllegalArgumentException("the title of " + code + " must not be blank");
    }
    return new ProblemCode(code, status, retryable, title);
  }

  /**
   * The code {@code HTTP.<status>} of an error a handler sent without a problem document ({@code sendError}):
   * retryable for 408, 429 and 5xx, titled with the status's reason phrase (or {@code HTTP <status>}).
   *
   * @param status an HTTP status, 400..599
   */
  public static ProblemCode forStatus(int status) {
    return of("HTTP." + status, status, status >= 500 || status == 408 || status == 429, reason(status));
  }

  /** The same code answered with another status (such as {@link #PAYLOAD_MISMATCH} as 409); equal to this one. */
  public ProblemCode withStatus(int status) {
    return of(code, status, retryable, title);
  }

  /** The {@code code} member, such as {@code CONFLICT.idempotency.in_progress}. */
  public String code() {
    return code;
  }

  /** The HTTP status. */
  public int status() {
    return status;
  }

  /** The {@code retryable} member. */
  public boolean retryable() {
    return retryable;
  }

  /** The {@code title} member. */
  public String title() {
    return title;
  }

  /** Whether {@code code} is this code's {@link #code()}; false for null. */
  public boolean is(String code) {
    return this.code.equals(code);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ProblemCode && ((ProblemCode) o).code.equals(code);
  }

  @Override
  public int hashCode() {
    return code.hashCode();
  }

  /** The code. */
  @Override
  public String toString() {
    return code;
  }

  private static String reason(int status) {
    switch (status) {
      case 400: return "Bad request";
      case 401: return "Unauthorized";
      case 403: return "Forbidden";
      case 404: return "Not found";
      case 405: return "Method not allowed";
      case 406: return "Not acceptable";
      case 409: return "Conflict";
      case 413: return "Content too large";
      case 415: return "Unsupported media type";
      case 422: return "Unprocessable content";
      case 429: return "Too many requests";
      case 503: return "Service unavailable";
      default: return "HTTP " + status;
    }
  }
}
