package dev.idem.examples.payments.auth;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Locale;

/** The bearer token of a request's {@code Authorization} header. */
final class BearerToken {
  private BearerToken() {}

  /** The token, or {@code null} when the request carries no single bearer token. */
  static String of(HttpServletRequest request) {
    String header = request.getHeader("Authorization");
    if (header == null || header.length() < 8 || !header.substring(0, 7).toLowerCase(Locale.ROOT).equals("bearer ")) {
      return null;
    }
    String token = header.substring(7).trim();
    return token.isEmpty() || token.length() > 512 ? null : token;
  }
}
