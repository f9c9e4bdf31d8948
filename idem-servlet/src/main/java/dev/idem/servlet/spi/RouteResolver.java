package dev.idem.servlet.spi;

import dev.idem.servlet.IdempotentRoute;
import jakarta.servlet.http.HttpServletRequest;
import java.util.Optional;

/**
 * Finds the idempotent route a request belongs to. The filter's builder makes one from the routes it is given;
 * frameworks supply their own (the Spring Boot starter reads {@code @Idempotent}). Implementations must be
 * thread-safe and fast: the filter asks for every unsafe request.
 */
@FunctionalInterface
public interface RouteResolver {

  /** The route of this request, or empty when the filter should let it pass untouched. */
  Optional<IdempotentRoute> resolve(HttpServletRequest request);
}
