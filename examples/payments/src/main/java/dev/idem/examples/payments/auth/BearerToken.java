package dev.idem.examples.payments.auth;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Enumeration;
import java.util.Locale;

/** The bearer token of a request's {@code Authorization} header. */
final class BearerToken {
  static final String HEADER = "Authorization";

  private BearerToken() {}

  /**
   * The token, or {@code null} when the request carries no single bearer token: no {@code Authorization} header,
   * another scheme, an empty or oversized token, or more than one {@code Authorization} header (then neither counts).
   */
  static String of(HttpServletRequest request) {
    if (repeated(request)) {
      return null;
    }
    String header = request.getHeader(HEADER);
    if (header == null || header.length() < 8 || !header.substring(0, 7).toLowerCase(Locale.ROOT).equals("bearer ")) {
      return null;
    }
    String token = header.substring(7).trim();
    return token.isEmpty() || token.length() > 512 ? null : token;
  }

  /**
   * Whether the request carries more than one {@code Authorization} header. The field is a singleton (RFC 9110,
   * section 11.6.2), so two of them are a malformed request, never a choice between credentials.
   */
  static boolean repeated(HttpServletRequest request) {
    Enumeration<String> values = request.getHeaders(HEADER);
    if (values == null || !values.hasMoreElements()) {
      return false;
    }
    values.nextElement();
    return values.hasMoreElements();
  }
}
