package dev.idem.console;

import jakarta.servlet.http.HttpServletRequest;
import java.util.Objects;

/**
 * Decides who may use the console's data and actions: given a request to one of its API routes, allow it and name
 * the operator (the name goes into the audit of every action), or refuse it. The console's files (the page, its
 * script and style sheet) hold no data and need no decision. Called on every API request, on the request's thread;
 * implementations are thread-safe and quick (no remote call per request if it can be helped).
 *
 * <p>The default, {@link #refuseAll()}, refuses everyone with a 403 problem that says how to configure the console:
 * a console mounted and forgotten opens nothing. Plug in the application's own check, for example the user its
 * security layer authenticated:
 *
 * <pre>{@code
 * ConsoleAuthorizer authorizer = request -> {
 *   Principal user = request.getUserPrincipal();
 *   if (user == null) {
 *     return ConsoleAuthorizer.Decision.unauthenticated("sign in first");
 *   }
 *   return request.isUserInRole("OPERATOR") ? ConsoleAuthorizer.Decision.allow(user.getName())
 *       : ConsoleAuthorizer.Decision.forbidden(user.getName() + " is not an operator");
 * };
 * }</pre>
 *
 * <p>The console's own protections run before the authorizer and do not depend on it: the {@code Host} allow-list
 * (against DNS rebinding), the refusal of cross-site requests, and the custom header every action carries.
 */
@FunctionalInterface
public interface ConsoleAuthorizer {

  /**
   * Allows or refuses a request to the console's API.
   *
   * @param request the request, with its headers, principal and session as the container made them
   * @return the decision; never null
   */
  Decision authorize(HttpServletRequest request);

  /** The default: refuses everyone, with a 403 problem that says how to configure the console. */
  static ConsoleAuthorizer refuseAll() {
    return RefuseAll.INSTANCE;
  }

  /**
   * Allows the requests that carry {@code Authorization: Bearer <token>} (one such header, not two), as
   * {@code operator}; the comparison takes the same time whatever the token sent. Suits a console used by a few
   * operators who share a secret (it names them all {@code operator} in the audit); prefer an authorizer over the
   * application's own users where it has some.
   *
   * @param token the secret, at least 16 characters; never logged
   * @param operator the name the audit gives whoever presents it
   * @throws IllegalArgumentException for a token shorter than 16 characters or a blank operator
   */
  static ConsoleAuthorizer bearerToken(String token, String operator) {
    Objects.requireNonNull(token, "token");
    Objects.requireNonNull(operator, "operator");
    if (token.length() < 16) {
      throw new IllegalArgumentException("the console's bearer token must be at least 16 characters, got "
          + token.length());
    }
    if (operator.isBlank()) {
      throw new IllegalArgumentException("the console's operator name must not be blank");
    }
    return new BearerToken(token, operator);
  }

  /** What an authorizer decided: allowed, with the operator's name, or refused, with a status and a detail. */
  final class Decision {
    /** The longest operator name: the audit's actor column holds 255 characters, with room for the channel. */
    public static final int MAX_OPERATOR = 200;

    private final String operator;
    private final int status;
    private final String detail;

    private Decision(String operator, int status, String detail) {
      this.operator = operator;
      this.status = status;
      this.detail = detail;
    }

    /**
     * Allows the request.
     *
     * @param operator who acts, as the audit names them: 1 to {@value #MAX_OPERATOR} characters, no control
     *     characters
     * @throws IllegalArgumentException for a blank, too long or unprintable name
     */
    public static Decision allow(String operator) {
      Objects.requireNonNull(operator, "operator");
      if (operator.isBlank() || operator.length() > MAX_OPERATOR
          || operator.chars().anyMatch(Character::isISOControl)) {
        throw new IllegalArgumentException("an operator name is 1 to " + MAX_OPERATOR + " characters without"
            + " control characters, got '" + operator.replaceAll("\\p{Cntrl}", "?") + "'");
      }
      return new Decision(operator, 200, null);
    }

    /**
     * Refuses a request that carries no credentials, or ones the authorizer does not know: 401 with
     * {@code WWW-Authenticate: Bearer}, which makes the console's page ask for a token.
     *
     * @param detail why, for the operator; never a secret
     */
    public static Decision unauthenticated(String detail) {
      return new Decision(null, 401, Objects.requireNonNull(detail, "detail"));
    }

    /**
     * Refuses a request whose caller is known but may not use the console: 403.
     *
     * @param detail why, for the operator; never a secret
     */
    public static Decision forbidden(String detail) {
      return new Decision(null, 403, Objects.requireNonNull(detail, "detail"));
    }

    /** Whether the request may go on. */
    public boolean allowed() {
      return operator != null;
    }

    /** The operator's name when allowed, else null. */
    public String operator() {
      return operator;
    }

    /** 200 when allowed, else 401 or 403. */
    public int status() {
      return status;
    }

    /** Why it was refused, or null when allowed. */
    public String detail() {
      return detail;
    }

    @Override
    public String toString() {
      return allowed() ? "allow " + operator : status + " " + detail;
    }
  }
}
