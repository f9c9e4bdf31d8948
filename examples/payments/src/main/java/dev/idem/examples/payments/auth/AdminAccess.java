package dev.idem.examples.payments.auth;

import jakarta.servlet.http.HttpServletRequest;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Who may use the admin routes: callers on a loopback address (unless disabled), and callers that present the admin
 * key as a bearer token. Immutable and thread-safe.
 *
 * <p>The loopback exemption is for tools on the service's machine (curl, scripts, tests), never for browsers: any web
 * page open in a browser on that machine can make it send requests to 127.0.0.1, and a simple cross-site
 * {@code POST /admin/outbox/replay?status=delivered} needs no CORS preflight. So a request that carries an
 * {@code Origin} header, or a {@code Sec-Fetch-Site} other than {@code none} (the user typed the address), which
 * browsers add and command-line tools do not, must present the admin key wherever it comes from. Browsers send neither
 * on a same-origin GET to a plain-HTTP page, though, so a page whose host name was rebound to 127.0.0.1 (DNS
 * rebinding) could still read admin data: the exemption also needs the request's {@code Host} to name the loopback
 * interface itself ({@code localhost}, {@code 127.0.0.1}, {@code [::1]}), which a rebound page cannot send.
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
    if (allowLoopback && isLoopback(request.getRemoteAddr()) && loopbackHost(request.getServerName())
        && !fromBrowserPage(request)) {
      return true;
    }
    String token = BearerToken.of(request);
    return token != null && ApiKeys.Digest.of(token).equals(adminKey);
  }

  /** Whether the request's Host names the loopback interface (not a name that merely resolves to it now). */
  private static boolean loopbackHost(String host) {
    if (host == null) {
      return false;
    }
    String h = host.toLowerCase(java.util.Locale.ROOT);
    return h.equals("localhost") || h.equals("127.0.0.1") || h.equals("[::1]") || h.equals("::1");
  }

  /** Whether a browser sent the request on behalf of a page (a fetch, a form, a link followed from a page). */
  private static boolean fromBrowserPage(HttpServletRequest request) {
    String site = request.getHeader("Sec-Fetch-Site");
    return request.getHeader("Origin") != null || (site != null && !site.equals("none"));
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
