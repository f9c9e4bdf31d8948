package dev.idem.servlet;

import dev.idem.core.Operation;
import dev.idem.servlet.internal.PathTemplate;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * A route whose requests go through Idem: an unsafe HTTP method, a path template and a mode. Its operation is
 * {@code "<METHOD> <template>"}, such as {@code POST /payments/{id}/refunds}, so every request to the route shares
 * one {@link dev.idem.core.OperationPolicy}. Immutable.
 *
 * <pre>{@code
 * IdempotentRoute.atomic("POST", "/orders")
 * IdempotentRoute.phased("POST", "/payments")
 * IdempotentRoute.atomic("POST", "/notes").withKeyOptional()   // without a key the request runs as usual
 * }</pre>
 */
public final class IdempotentRoute {
  /** How the route's requests execute; see {@link dev.idem.core.Idem}. */
  public enum Mode {
    /** The filter runs the handler inside {@link dev.idem.core.Idem#atomic}: one transaction for all. */
    ATOMIC,
    /** The handler calls {@link IdempotentExchange#phased}, which runs the registered phased operation. */
    PHASED,
    /** The filter runs the handler inside {@link dev.idem.core.Idem#leased}, for stores without transactions. */
    LEASED
  }

  private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

  private final String method;
  private final PathTemplate template;
  private final Mode mode;
  private final boolean keyRequired;
  private final Operation operation;

  private IdempotentRoute(String method, PathTemplate template, Mode mode, boolean keyRequired) {
    this.method = method;
    this.template = template;
    this.mode = mode;
    this.keyRequired = keyRequired;
    this.operation = Operation.of(method + " " + template.template());
  }

  /**
   * A route.
   *
   * @param method an unsafe method token such as {@code POST}, {@code PUT}, {@code PATCH} or {@code DELETE}
   * @param template a path within the application: literal segments and whole-segment variables ({@code {id}})
   * @throws IllegalArgumentException for a safe method (GET, HEAD, OPTIONS and TRACE are never idempotency-keyed)
   *     or a template the matcher does not support
   */
  public static IdempotentRoute of(String method, String template, Mode mode) {
    Objects.requireNonNull(method, "method");
    Objects.requireNonNull(mode, "mode");
    String m = method.trim().toUpperCase(Locale.ROOT);
    if (m.isEmpty() || !m.chars().allMatch(c -> c >= 'A' && c <= 'Z')) {
      throw new IllegalArgumentException("route method must be an HTTP method token, got '" + method + "'");
    }
    if (SAFE.contains(m)) {
      throw new IllegalArgumentException("route " + m + " " + template + ": " + m
          + " is a safe method and is never handled by the idempotency filter");
    }
    return new IdempotentRoute(m, PathTemplate.parse(template), mode, true);
  }

  public static IdempotentRoute atomic(String method, String template) {
    return of(method, template, Mode.ATOMIC);
  }

  public static IdempotentRoute phased(String method, String template) {
    return of(method, template, Mode.PHASED);
  }

  public static IdempotentRoute leased(String method, String template) {
    return of(method, template, Mode.LEASED);
  }

  /** This route, but a request without a key runs as if the filter were not there (instead of a 400). */
  public IdempotentRoute withKeyOptional() {
    return new IdempotentRoute(method, template, mode, false);
  }

  public String method() {
    return method;
  }

  public String template() {
    return template.template();
  }

  public Mode mode() {
    return mode;
  }

  public boolean keyRequired() {
    return keyRequired;
  }

  /** {@code "<METHOD> <template>"}. */
  public Operation operation() {
    return operation;
  }

  /** Whether the request's method and path (within the application) match this route. */
  public boolean matches(String requestMethod, String path) {
    return method.equals(requestMethod) && template.matches(path);
  }

  int specificity() {
    return template.specificity();
  }

  @Override
  public String toString() {
    return operation.name() + " (" + mode.name().toLowerCase(Locale.ROOT) + (keyRequired ? "" : ", key optional")
        + ")";
  }
}
