package dev.idem.servlet;

import dev.idem.servlet.internal.BufferedRequest;
import dev.idem.servlet.internal.JsonText;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;

/**
 * Small helpers for servlets that take and give bodies the way the filter does: a request body read whole up to a
 * limit, and JSON string literals for small answers.
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

  /** {@code value} as a JSON string literal, in quotes, with every character JSON requires escaped. */
  public static String jsonString(String value) {
    StringBuilder out = new StringBuilder(value.length() + 2);
    JsonText.appendString(out, value);
    return out.toString();
  }
}
