package dev.idem.servlet;

import dev.idem.servlet.internal.JsonText;
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
 * Immutable; build with {@link #of} and the {@code with...} methods.
 *
 * <pre>{@code
 * Problem.of(404, "NOT_FOUND.payment", "Payment not found").withDetail("no payment pay_123").write(response);
 * }</pre>
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
   * A problem that is not retryable.
   *
   * @param status an HTTP status, 400..599
   * @param code the taxonomy code, such as {@code VALIDATION.amount}
   * @param title a short, human-readable summary that does not change from occurrence to occurrence
   */
  public static Problem of(int status, String code, String title) {
    if (status < 400 || status > 599) {
      throw new IllegalArgumentException("a problem's status must be 400..599, got " + status);
    }
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(title, "title");
    if (code.isEmpty()) {
      throw new IllegalArgumentException("a problem's code must not be empty");
    }
    return new Problem(status, code, title, null, false, Map.of());
  }

  /** An explanation specific to this occurrence. Never put secrets here: problems may be stored and replayed. */
  public Problem withDetail(String detail) {
    return new Problem(status, code, title, detail, retryable, extensions);
  }

  public Problem withRetryable(boolean retryable) {
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
   * The response must not be committed.
   */
  public void write(HttpServletResponse response) throws IOException {
    byte[] body = toJson();
    response.setStatus(status);
    response.setContentType(MEDIA_TYPE);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  @Override
  public String toString() {
    return status + " " + code + (detail == null ? "" : ": " + detail);
  }
}
