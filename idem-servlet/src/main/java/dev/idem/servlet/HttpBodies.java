package dev.idem.servlet;

import dev.idem.servlet.internal.BufferedRequest;
import dev.idem.servlet.internal.JsonText;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.Objects;

/**
 * Small helpers for servlets and filters that take and give bodies the way the filter does: a request body read whole
 * up to a limit, the request with that body served from memory, and JSON string literals for small answers.
 */
public final class HttpBodies {
  /**
   * How much of a body over its limit is read and discarded before the refusal ({@value} bytes, as Tomcat's
   * {@code maxSwallowSize}): a server that answers and closes while the client is still sending makes the client's
   * system reset the connection, and the client may lose the answer with it.
   */
  public static final int MAX_DISCARDED_BYTES = 2 << 20;

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
   * Call before writing a refusal that did not read the request body. Reads and discards the body, up to
   * {@code limit} bytes, so that the connection can carry the client's next request; when the body is larger, or
   * cannot be read, sets {@code Connection: close} on the response instead. A body of no declared length (chunked)
   * is read as it arrives, up to the limit: clients that stream a body (Java's {@code HttpClient} with a publisher of
   * unknown length) then keep their connection, and a sender that trickles it is bounded by the container's read
   * timeout, as any request that is slow to arrive is. A container that finds a body unread
   * after the answer may close the connection without a word (Jetty 12 does when the body has not all arrived yet),
   * and a client that already sent its next request on that connection gets no answer at all.
   *
   * @param request the refused request
   * @param response its response, not yet committed
   * @param limit the most bytes worth reading to keep the connection
   * @return true when the body was read to its end and the connection stays open
   */
  public static boolean discardOrClose(HttpServletRequest request, HttpServletResponse response, int limit) {
    if (limit < 0) {
      throw new IllegalArgumentException("limit must not be negative, got " + limit);
    }
    if (request.getContentLengthLong() <= limit) {
      try {
        InputStream in = request.getInputStream();
        byte[] buffer = new byte[8192];
        long read = 0;
        for (int n; read <= limit && (n = in.read(buffer)) >= 0; ) {
          read += n;
        }
        if (read <= limit) {
          return true;
        }
      } catch (IOException | IllegalStateException e) {
        // fall through: the connection cannot be trusted with another request
      }
    }
    response.setHeader("Connection", "close");
    return false;
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
