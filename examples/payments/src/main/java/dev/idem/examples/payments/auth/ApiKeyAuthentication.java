package dev.idem.examples.payments.auth;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.examples.payments.web.PaymentsProblems;
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
 *   <li>{@code /provider/**} (the simulated provider, an external system) and {@code /webhooks/**} (webhooks from the
 *       provider, authenticated by their signature) are open;
 *   <li>{@code /console/**} (the operator console) passes without a principal: its authorizer checks the admin key
 *       itself;
 *   <li>{@code /actuator/health} is open, and its details (the database, the disk) are for the admin: a caller that
 *       {@link AdminAccess} lets in becomes a principal in role {@link #ADMIN_ROLE}, which
 *       {@code management.endpoint.health.show-details=when-authorized} and
 *       {@code management.endpoint.health.roles=ADMIN} require; anyone else sees the status alone;
 *   <li>{@code /admin/**} and the rest of {@code /actuator/**} need {@link AdminAccess};
 *   <li>everything else needs an API key: without a known one the answer is 401 {@code AUTH.unauthenticated}.
 * </ul>
 *
 * <p>A request with more than one {@code Authorization} header is refused on every route but the open ones, before
 * anything else is looked at: 400 {@code VALIDATION.request}, as the idempotency filter answers two
 * {@code Idempotency-Key} headers with a 400. The field is a singleton, so two of them are a malformed request, not
 * a failed login: no credential is taken from either, whichever comes first.
 *
 * <p>Thread-safe.
 */
public final class ApiKeyAuthentication implements Filter {
  /** The role of a request that {@link AdminAccess} lets in, for the actuator's health details. */
  public static final String ADMIN_ROLE = "ADMIN";
  private static final Principal ADMIN = () -> "admin";

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
    if (under(path, "/provider") || under(path, "/webhooks") || path.equals("/error")) {
      chain.doFilter(request, response);
      return;
    }
    if (BearerToken.repeated(request)) {
      response.setHeader("WWW-Authenticate", "Bearer realm=\"payments\", error=\"invalid_request\"");
      Problem.of(PaymentsProblems.INVALID_REQUEST)
          .withDetail("the request carries more than one Authorization header; send exactly one").write(response);
      return;
    }
    if (under(path, "/console")) {
      // the operator console: its authorizer (ConsoleConfiguration) checks the admin key itself
      chain.doFilter(request, response);
      return;
    }
    boolean health = path.equals("/actuator/health");
    // the rest of the actuator lists and evicts every tenant's idempotency records: an admin route like the others
    if (health || under(path, "/admin") || under(path, "/actuator")) {
      if (admin.allows(request)) {
        chain.doFilter(new AuthenticatedRequest(request, ADMIN, ADMIN_ROLE), response);
      } else if (health) {
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
    chain.doFilter(new AuthenticatedRequest(request, tenant.get(), null), response);
  }

  private static boolean under(String path, String prefix) {
    return path.equals(prefix) || path.startsWith(prefix + "/");
  }

  private static void refuse(HttpServletResponse response, String detail) throws IOException {
    response.setHeader("WWW-Authenticate", "Bearer realm=\"payments\"");
    Problem.of(ProblemCode.UNAUTHENTICATED).withDetail(detail).write(response);
  }

  /** The request as seen after authentication: its principal is the tenant, or the admin in {@link #ADMIN_ROLE}. */
  private static final class AuthenticatedRequest extends HttpServletRequestWrapper {
    private final Principal principal;
    private final String role;

    AuthenticatedRequest(HttpServletRequest request, Principal principal, String role) {
      super(request);
      this.principal = principal;
      this.role = role;
    }

    @Override
    public Principal getUserPrincipal() {
      return principal;
    }

    @Override
    public String getRemoteUser() {
      return principal.getName();
    }

    @Override
    public String getAuthType() {
      return "Bearer";
    }

    @Override
    public boolean isUserInRole(String role) {
      return role != null && role.equals(this.role);
    }
  }
}
