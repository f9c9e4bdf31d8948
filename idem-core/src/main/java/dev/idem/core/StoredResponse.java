package dev.idem.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What a replay returns: status, headers and body bytes. Immutable; the body array is copied in and out.
 *
 * <p>Header names are kept in lower case. {@code Authorization}, {@code Cookie}, {@code Set-Cookie} and
 * {@code Proxy-Authorization} are never kept: they are dropped on construction, so they cannot reach a store.
 */
public final class StoredResponse {
  /** Headers that never enter a stored response. */
  public static final Set<String> SENSITIVE_HEADERS =
      Set.of("authorization", "cookie", "set-cookie", "proxy-authorization");

  private final int status;
  private final Map<String, List<String>> headers;
  private final byte[] body;

  private StoredResponse(int status, Map<String, List<String>> headers, byte[] body) {
    if (status < 100 || status > 999) {
      throw new IllegalArgumentException("status must be 100..999, got " + status);
    }
    this.status = status;
    this.headers = headers;
    this.body = body;
  }

  public static StoredResponse of(int status, Map<String, List<String>> headers, byte[] body) {
    Objects.requireNonNull(headers, "headers");
    Objects.requireNonNull(body, "body");
    Map<String, List<String>> copy = new LinkedHashMap<>();
    headers.forEach((name, values) -> {
      String lower = name.toLowerCase(Locale.ROOT);
      if (!SENSITIVE_HEADERS.contains(lower) && values != null && !values.isEmpty()) {
        List<String> before = copy.get(lower);
        if (before == null) {
          copy.put(lower, List.copyOf(values));
        } else {
          // two names that differ only in case: one header, values in order
          List<String> merged = new ArrayList<>(before);
          merged.addAll(values);
          copy.put(lower, List.copyOf(merged));
        }
      }
    });
    return new StoredResponse(status, Collections.unmodifiableMap(copy), body.clone());
  }

  public static StoredResponse of(int status, byte[] body) {
    return of(status, Map.of(), body);
  }

  /** A response with a UTF-8 text body. */
  public static StoredResponse of(int status, String body) {
    return of(status, Map.of(), body.getBytes(StandardCharsets.UTF_8));
  }

  /** A JSON response: the body with {@code content-type: application/json}. */
  public static StoredResponse json(int status, String json) {
    return of(status, Map.of("content-type", List.of("application/json")), json.getBytes(StandardCharsets.UTF_8));
  }

  public int status() {
    return status;
  }

  /** Lower-case header names to their values, in insertion order. Unmodifiable. */
  public Map<String, List<String>> headers() {
    return headers;
  }

  /** The first value of a header, or {@code null}. */
  public String header(String name) {
    List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
    return values == null ? null : values.get(0);
  }

  public byte[] body() {
    return body.clone();
  }

  public int bodyLength() {
    return body.length;
  }

  public String bodyAsString() {
    return new String(body, StandardCharsets.UTF_8);
  }

  /** Headers plus body, roughly: the figure the response-size bound applies to. */
  public long size() {
    long size = body.length;
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      for (String v : e.getValue()) {
        size += e.getKey().length() + v.length() + 4;
      }
    }
    return size;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof StoredResponse)) {
      return false;
    }
    StoredResponse r = (StoredResponse) o;
    return status == r.status && headers.equals(r.headers) && Arrays.equals(body, r.body);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * status + headers.hashCode()) + Arrays.hashCode(body);
  }

  @Override
  public String toString() {
    return "StoredResponse[status=" + status + ", headers=" + headers.keySet() + ", body=" + body.length + " bytes]";
  }
}
