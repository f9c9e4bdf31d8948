package dev.idem.examples.payments.auth;

import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletRequestWrapper;
import jakarta.servlet.http.HttpServletRequest;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;

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
 *
 * <p>Nor is it for requests that came through a proxy. A request that carries any of {@link #FORWARDING_HEADERS}
 * ({@code Forwarded}, {@code X-Forwarded-For}, {@code X-Forwarded-Host}, {@code X-Forwarded-Proto},
 * {@code X-Real-IP}, {@code Via}) must present the admin key, even from loopback: a reverse proxy on the same machine
 * makes every caller look local, and a client can write these headers itself. The container's own request is checked
 * too, beneath any {@link ServletRequestWrapper}, because Spring's {@code ForwardedHeaderFilter} hides them from the
 * request it passes on after taking the client's address and host from them. That filter, or the container's own
 * handling of forwarded headers, can still put a client-written {@code 127.0.0.1} and {@code localhost} in the
 * address and host this class reads and leave no such header behind; so the service refuses to start with the
 * exemption on while {@code server.forward-headers-strategy} (or a cloud platform Spring Boot detects) applies
 * forwarded headers ({@code PaymentsConfiguration}).
 */
public final class AdminAccess {
  /** The headers that mark a request as forwarded by a proxy (or a client pretending to be one), in any case. */
  public static final List<String> FORWARDING_HEADERS =
      List.of("Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-IP", "Via");

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
        && !fromBrowserPage(request) && !forwarded(request)) {
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

  /** Whether the request, or the container's request beneath any wrappers, carries a proxy's forwarding header. */
  private static boolean forwarded(HttpServletRequest request) {
    ServletRequest inner = request;
    while (inner instanceof ServletRequestWrapper wrapper) {
      inner = wrapper.getRequest();
    }
    return carriesForwardingHeader(request)
        || (inner != request && inner instanceof HttpServletRequest http && carriesForwardingHeader(http));
  }

  private static boolean carriesForwardingHeader(HttpServletRequest request) {
    for (String name : FORWARDING_HEADERS) {
      if (request.getHeader(name) != null) {
        return true;
      }
    }
    return false;
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
