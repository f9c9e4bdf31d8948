package dev.idem.servlet;

import dev.idem.servlet.internal.BufferedRequest;
import dev.idem.servlet.internal.JsonText;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Objects;

/**
 * Small helpers for servlets and filters that take and give bodies the way the filter does: a request body read whole
 * up to a limit, the request with that body served from memory, and JSON string literals for small answers.
 */
public final class HttpBodies {
  private HttpBodies() {}

  /**
   * Reads the whole request body, refusing more than {@code limit} bytes. A declared length above the limit is refused
   * before reading; a body that turns out larger is refused as soon as it passes the limit. Memory grows with the bytes
   * that arrive, not with what the caller declares.
   *
   * @return the body, or {@code null} when it is larger than the limit
   */
  public static byte[] readAtMost(HttpServletRequest request, int limit) throws IOException {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must not be negative, got " + limit);
    }
    return BufferedRequest.readBody(request, limit);
  }

  /**
   * The request with its body already read: its stream and reader serve {@code body}, and a form body's parameters
   * ({@code application/x-www-form-urlencoded}) are parsed from it, after the query string's, as the container would
   * have. For a filter that reads bodies itself (under a deadline, say) before the rest of the chain.
   *
   * @param request the request whose body was read
   * @param body every byte of that body
   */
  public static HttpServletRequest withBody(HttpServletRequest request, byte[] body) {
    return new BufferedRequest(Objects.requireNonNull(request, "request"), Objects.requireNonNull(body, "body"));
  }

  /** {@code value} as a JSON string literal, in quotes, with every character JSON requires escaped. */
  public static String jsonString(String value) {
    StringBuilder out = new StringBuilder(value.length() + 2);
    JsonText.appendString(out, value);
    return out.toString();
  }
}
