package dev.idem.console;

import jakarta.servlet.http.HttpServletRequest;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Enumeration;

/** {@link ConsoleAuthorizer#bearerToken}: one shared secret, compared by digest in constant time. Immutable. */
final class BearerToken implements ConsoleAuthorizer {
  private final byte[] expected;
  private final String operator;

  /** @param token the secret, checked by {@link ConsoleAuthorizer#bearerToken}; only its digest is kept */
  BearerToken(String token, String operator) {
    this.expected = digest(token);
    this.operator = operator;
  }

  private static byte[] digest(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  @Override
  public Decision authorize(HttpServletRequest request) {
    Enumeration<String> all = request.getHeaders("Authorization");
    if (all != null && all.hasMoreElements()) {
      all.nextElement();
      if (all.hasMoreElements()) {
        return Decision.unauthenticated("the request carries more than one Authorization header; send exactly one");
      }
    }
    String header = request.getHeader("Authorization");
    if (header == null || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return Decision.unauthenticated("send Authorization: Bearer <the console's token>");
    }
    boolean same = MessageDigest.isEqual(expected, digest(header.substring(7).strip()));
    return same ? Decision.allow(operator) : Decision.unauthenticated("the token is not the console's");
  }

  @Override
  public String toString() {
    return "ConsoleAuthorizer.bearerToken(operator=" + operator + ")";
  }
}
