package dev.idem.servlet.spi;

import dev.idem.core.Scope;
import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Objects;
import java.util.Optional;

/**
 * Says who owns a request's key: the tenant or principal whose records it may see. Keys never cross scopes, so
 * the scope must come from authentication, never from anything the client can choose freely. A request whose scope
 * is unknown is answered 401 {@code AUTH.unauthenticated}. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface ScopeResolver {

  /** The request's scope, or empty when the request is not authenticated. */
  Optional<Scope> resolve(HttpServletRequest request);

  /** The authenticated principal's name ({@link HttpServletRequest#getUserPrincipal()}). The default. */
  static ScopeResolver principal() {
    return request -> {
      Principal p = request.getUserPrincipal();
      return p == null || p.getName() == null || p.getName().isEmpty() ? Optional.empty()
          : Optional.of(Scope.of(p.getName()));
    };
  }

  /**
   * The value of a header that a trusted layer in front of the service sets (a gateway that authenticated the
   * caller and strips the header from client requests). Never use a header the client controls.
   */
  static ScopeResolver header(String name) {
    Objects.requireNonNull(name, "name");
    return request -> {
      String v = request.getHeader(name);
      return v == null || v.isEmpty() ? Optional.empty() : Optional.of(Scope.of(v));
    };
  }
}
