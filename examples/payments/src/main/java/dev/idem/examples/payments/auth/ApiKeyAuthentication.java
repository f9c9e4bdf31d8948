package dev.idem.examples.payments.auth;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.IdempotencyFilter;
import dev.idem.servlet.Problem;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.util.Optional;

/**
 * Authenticates requests by {@code Authorization: Bearer <api key>} and exposes the tenant as the request's
 * principal, which the idempotency filter takes as the scope. It must run before that filter.
 *
 * <ul>
 *   <li>{@code /actuator/**}, {@code /provider/**} (the simulated provider, an external system) and
 *       {@code /webhooks/**} (webhooks from the provider, authenticated by their signature) are open;
 *   <li>{@code /admin/**} needs {@link AdminAccess};
 *   <li>everything else needs an API key: without a known one the answer is 401 {@code AUTH.unauthenticated}.
 * </ul>
 *
 * Thread-safe.
 */
public final class ApiKeyAuthentication implements Filter {
  private final ApiKeys keys;
  private final AdminAccess admin;

  public ApiKeyAuthentication(ApiKeys keys, AdminAccess admin) {
    this.keys = keys;
    this.admin = admin;
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    String path = IdempotencyFilter.pathWithinApplication(request);
    if (path.equals("/actuator/health") || under(path, "/provider") || under(path, "/webhooks")
        || path.equals("/error")) {
      chain.doFilter(request, response);
      return;
    }
    // the actuator lists and evicts every tenant's idempotency records: an admin route like the others
    if (under(path, "/admin") || under(path, "/actuator")) {
      if (admin.allows(request)) {
        chain.doFilter(request, response);
      } else {
        refuse(response, "admin routes need Authorization: Bearer <payments.admin-key>, or a loopback caller that is"
            + " not a browser page (no Origin, no cross-site Sec-Fetch-Site)");
      }
      return;
    }
    String token = BearerToken.of(request);
    Optional<Tenant> tenant = keys.tenantOf(token);
    if (tenant.isEmpty()) {
      refuse(response, token == null ? "send Authorization: Bearer <api key>" : "the API key is not known");
      return;
    }
    chain.doFilter(new AuthenticatedRequest(request, tenant.get()), response);
  }

  private static boolean under(String path, String prefix) {
    return path.equals(prefix) || path.startsWith(prefix + "/");
  }

  private static void refuse(HttpServletResponse response, String detail) throws IOException {
    response.setHeader("WWW-Authenticate", "Bearer realm=\"payments\"");
    Problem.of(ProblemCode.UNAUTHENTICATED).withDetail(detail).write(response);
  }

  /** The request as seen after authentication: its principal is the tenant. */
  private static final class AuthenticatedRequest extends HttpServletRequestWrapper {
    private final Tenant tenant;

    AuthenticatedRequest(HttpServletRequest request, Tenant tenant) {
      super(request);
      this.tenant = tenant;
    }

    @Override
    public Principal getUserPrincipal() {
      return tenant;
    }

    @Override
    public String getRemoteUser() {
      return tenant.name();
    }

    @Override
    public String getAuthType() {
      return "Bearer";
    }

    @Override
    public boolean isUserInRole(String role) {
      return false;
    }
  }
}
