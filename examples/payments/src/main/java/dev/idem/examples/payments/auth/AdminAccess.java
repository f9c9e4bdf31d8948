package dev.idem.examples.payments.auth;

import jakarta.servlet.http.HttpServletRequest;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Who may use the admin routes: callers on a loopback address (unless disabled), and callers that present the admin
 * key as a bearer token. Immutable and thread-safe.
 */
public final class AdminAccess {
  private final ApiKeys.Digest adminKey;
  private final boolean allowLoopback;

  public AdminAccess(String adminKey, boolean allowLoopback) {
    if (adminKey == null || adminKey.isBlank()) {
      throw new IllegalArgumentException("payments.admin-key must not be blank");
    }
    this.adminKey = ApiKeys.Digest.of(adminKey);
    this.allowLoopback = allowLoopback;
  }

  public boolean allows(HttpServletRequest request) {
    if (allowLoopback && isLoopback(request.getRemoteAddr())) {
      return true;
    }
    String token = BearerToken.of(request);
    return token != null && ApiKeys.Digest.of(token).equals(adminKey);
  }

  private static boolean isLoopback(String address) {
    if (address == null || address.isEmpty() || !address.chars().allMatch(c -> Character.digit(c, 16) >= 0
        || c == '.' || c == ':' || c == '[' || c == ']')) {
      return false;
    }
    try {
      return InetAddress.getByName(address).isLoopbackAddress();
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
