package dev.idem.examples.payments.console;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.examples.payments.auth.AdminAccess;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * The check on the console's routes ({@code /admin/console/**}): only {@code Authorization: Bearer <admin key>}
 * opens them, from loopback callers too, and their answers are never cached. Thread-safe.
 *
 * <p>Implementation note: the other admin routes trust loopback callers while {@code payments.admin-allow-loopback}
 * is on, which suits curl on a developer's machine. It does not suit a browser: every page the operator has open is
 * a loopback caller of a service on the same machine, so the console must never work without the key. Its login
 * checks the key here ({@code GET /admin/console/session}), which is why a tenant's API key is refused even from
 * loopback; once logged in, the page sends the key with every call, to these routes and to the outbox's.
 */
final class ConsoleAccess implements HandlerInterceptor {
  private final AdminAccess admin;

  /** @param admin the admin key, without the loopback exemption */
  ConsoleAccess(AdminAccess admin) {
    this.admin = admin;
  }

  @Override
  public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
      throws IOException {
    response.setHeader("Cache-Control", "no-store");
    if (admin.allows(request)) {
      return true;
    }
    response.setHeader("WWW-Authenticate", "Bearer realm=\"payments-console\"");
    Problem.of(ProblemCode.UNAUTHENTICATED)
        .withDetail("the console's routes need Authorization: Bearer <payments.admin-key>, from loopback callers too")
        .write(response);
    return false;
  }
}
