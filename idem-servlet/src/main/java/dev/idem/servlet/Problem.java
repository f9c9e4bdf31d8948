package dev.idem.servlet;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.internal.JsonText;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.ServletResponseWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An RFC 9457 problem document ({@code application/problem+json}) with Idem's two extensions: {@code code} (the
 * error taxonomy of the HTTP contract, such as {@code VALIDATION.idempotency_key_missing}) and {@code retryable}.
 * Immutable; build with {@link #of(ProblemCode)} (preferred: the code, its status, title and {@code retryable} are
 * defined once, as a {@link ProblemCode} constant) or {@link #of(int, String, String)}, and the {@code with...}
 * methods.
 *
 * <pre>{@code
 * static final ProblemCode PAYMENT_NOT_FOUND = ProblemCode.of("NOT_FOUND.payment", 404, false, "Payment not found");
 *
 * Problem.of(PAYMENT_NOT_FOUND).withDetail("no payment pay_123").write(response);
 * }</pre>
 *
 * <p>{@link #write} tells every {@link ProblemListener} in the response's wrapper chain which code it wrote.
 */
public final class Problem {
  /** The media type of every problem document. */
  public static final String MEDIA_TYPE = "application/problem+json";
  /** The prefix of the {@code type} member: a URN per code, stable and resolvable by documentation. */
  public static final String TYPE_PREFIX = "urn:idem:problem:";

  private final int status;
  private final String code;
  private final String title;
  private final String detail;
  private final boolean retryable;
  private final Map<String, Object> extensions;

  private Problem(int status, String code, String title, String detail, boolean retryable,
      Map<String, Object> extensions) {
    this.status = status;
    this.code = code;
    this.title = title;
    this.detail = detail;
    this.retryable = retryable;
    this.extensions = extensions;
  }

  /**
   * The problem of a code: its status, title and {@code retryable}. Preferred to {@link #of(int, String, String)}.
   *
   * @param code the code, such as {@link ProblemCode#IN_PROGRESS} or one of the application's
   */
  public static Problem of(ProblemCode code) {
    Objects.requireNonNull(code, "code");
    return new Problem(code.status(), code.code(), code.title(), null, code.retryable(), Map.of());
  }

  /**
   * A problem that is not retryable, for a code the application does not define as a {@link ProblemCode} (one built
   * at run time, such as {@code VALIDATION.<field>}); prefer {@link #of(ProblemCode)}.
   *
   * <p>A code is written to logs and the MDC ({@code error_code}) as well as the answer, and one built at run time may
   * hold text a client chose (a JSON member's name): every character outside {@link ProblemCode}'s alphabet (ASCII
   * letters, digits, {@code _}, and {@code .} between parts) is replaced by {@code _}, so a code never carries a line
   * break, an escape sequence or other text that could forge a log line. Build codes from names of your own where
   * you can: the replacement keeps a client's text from the logs, not from the code.
   *
   * @param status an HTTP status, 400..599
   * @param code the taxonomy code, such as {@code VALIDATION.amount}
   * @param title a short, human-readable summary that does not change from occurrence to occurrence
   */
  public static Problem of(int status, String code, String title) {
    checkStatus(status);
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(title, "title");
    if (code.isEmpty()) {
      throw new IllegalArgumentException("a problem's code must not be empty");
    }
    return new Problem(status, safeCode(code), title, null, false, Map.of());
  }

  /** The code with every character other than an ASCII letter, digit, {@code _} or {@code .} replaced by {@code _}. */
  static String safeCode(String code) {
    StringBuilder safe = null;
    for (int i = 0; i < code.length(); i++) {
      char c = code.charAt(i);
      boolean allowed = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
          || c == '.';
      if (!allowed && safe == null) {
        safe = new StringBuilder(code.length()).append(code, 0, i);
      }
      if (safe != null) {
        safe.append(allowed ? c : '_');
      }
    }
    return safe == null ? code : safe.toString();
  }

  private static void checkStatus(int status) {
    if (status < 400 || status > 599) {
      throw new IllegalArgumentException("a problem's status must be 400..599, got " + status);
    }
  }

  /** An explanation specific to this occurrence. Never put secrets here: problems may be stored and replayed. */
  public Problem withDetail(String detail) {
    return new Problem(status, code, title, detail, retryable, extensions);
  }

  /** Whether a retry of the same request may succeed: the {@code retryable} member. */
  public Problem withRetryable(boolean retryable) {
    return new Problem(status, code, title, detail, retryable, extensions);
  }

  /** A more specific title for this occurrence's circumstances than the code's. */
  public Problem withTitle(String title) {
    return new Problem(status, code, Objects.requireNonNull(title, "title"), detail, retryable, extensions);
  }

  /**
   * Another status for the same code (such as a payload mismatch answered 409 rather than 422).
   *
   * @param status an HTTP status, 400..599
   */
  public Problem withStatus(int status) {
    checkStatus(status);
    return new Problem(status, code, title, detail, retryable, extensions);
  }

  /**
   * Adds an extension member. Values may be strings, numbers, booleans or lists of strings.
   *
   * @throws IllegalArgumentException for a reserved member name or another value type
   */
  public Problem with(String name, Object value) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    if (List.of("type", "title", "status", "detail", "instance", "code", "retryable").contains(name)) {
      throw new IllegalArgumentException("'" + name + "' is a reserved problem member");
    }
    if (!(value instanceof String || value instanceof Number || value instanceof Boolean || value instanceof List)) {
      throw new IllegalArgumentException("problem member '" + name + "': unsupported value type "
          + value.getClass().getName());
    }
    Map<String, Object> next = new LinkedHashMap<>(extensions);
    next.put(name, value instanceof List ? List.copyOf((List<?>) value) : value);
    return new Problem(status, code, title, detail, retryable, next);
  }

  public int status() {
    return status;
  }

  public String code() {
    return code;
  }

  public String title() {
    return title;
  }

  public String detail() {
    return detail;
  }

  public boolean retryable() {
    return retryable;
  }

  /** The problem document, UTF-8. */
  public byte[] toJson() {
    StringBuilder out = new StringBuilder(160);
    out.append("{\"type\":");
    JsonText.appendString(out, TYPE_PREFIX + code);
    out.append(",\"title\":");
    JsonText.appendString(out, title);
    out.append(",\"status\":").append(status);
    if (detail != null) {
      out.append(",\"detail\":");
      JsonText.appendString(out, detail);
    }
    out.append(",\"code\":");
    JsonText.appendString(out, code);
    out.append(",\"retryable\":").append(retryable);
    for (Map.Entry<String, Object> e : extensions.entrySet()) {
      out.append(',');
      JsonText.appendString(out, e.getKey());
      out.append(':');
      appendValue(out, e.getValue());
    }
    out.append('}');
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void appendValue(StringBuilder out, Object v) {
    if (v instanceof String) {
      JsonText.appendString(out, (String) v);
    } else if (v instanceof List) {
      out.append('[');
      List<Object> items = new ArrayList<>((List<?>) v);
      for (int i = 0; i < items.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        appendValue(out, items.get(i));
      }
      out.append(']');
    } else {
      out.append(v);
    }
  }

  /**
   * Writes this problem as the whole response: status, {@code Content-Type: application/problem+json} and the body.
   * The response must not be committed. First tells every {@link ProblemListener} in the response's wrapper chain
   * ({@link #announce}).
   */
  public void write(HttpServletResponse response) throws IOException {
    byte[] body = toJson();
    response.setStatus(status);
    response.setContentType(MEDIA_TYPE);
    announce(response, code);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  /**
   * Tells the response and every response it wraps ({@link ServletResponseWrapper#getResponse()}, down to the
   * container's) that implements {@link ProblemListener} that the answer is a problem with this code. {@link #write}
   * calls it; call it when writing a problem document some other way (such as a stored one).
   *
   * @param response the response the problem is written to
   * @param code the problem's {@code code} member
   */
  public static void announce(ServletResponse response, String code) {
    Objects.requireNonNull(code, "code");
    for (ServletResponse r = response; r != null;
        r = r instanceof ServletResponseWrapper ? ((ServletResponseWrapper) r).getResponse() : null) {
      if (r instanceof ProblemListener) {
        ((ProblemListener) r).problemWritten(code);
      }
    }
  }

  @Override
  public String toString() {
    return status + " " + code + (detail == null ? "" : ": " + detail);
  }
}
