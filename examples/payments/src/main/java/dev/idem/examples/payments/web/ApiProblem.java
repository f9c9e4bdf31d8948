package dev.idem.examples.payments.web;

import dev.idem.servlet.Problem;
import java.util.Objects;

/**
 * Thrown by a handler to answer with a problem document; {@link ProblemAdvice} writes it. Used for answers that are
 * decided before an idempotent execution starts (so nothing is stored) and on plain routes.
 */
public final class ApiProblem extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Problem problem;

  public ApiProblem(Problem problem) {
    super(Objects.requireNonNull(problem, "problem").toString(), null, false, false);
    this.problem = problem;
  }

  public Problem problem() {
    return problem;
  }

  /** The longest field name that becomes part of a code; the service's own names are far shorter. */
  private static final int MAX_CODE_FIELD = 64;

  /**
   * A 400 {@code VALIDATION.<field>} problem, not retryable. The field may be a name the client chose (an unknown
   * member): only a name of ASCII letters, digits and {@code _}, at most 64 of them, becomes part of the code, which
   * logs and the MDC carry; any other is answered {@code VALIDATION.field}, with the name, escaped, in the
   * {@code field} member.
   */
  public static ApiProblem invalid(String field, String detail) {
    if (plainName(field)) {
      return new ApiProblem(Problem.of(400, "VALIDATION." + field, "Invalid request").withDetail(detail));
    }
    return new ApiProblem(Problem.of(400, "VALIDATION.field", "Invalid request").withDetail(detail)
        .with("field", escaped(field)));
  }

  private static boolean plainName(String field) {
    return !field.isEmpty() && field.length() <= MAX_CODE_FIELD && field.chars().allMatch(
        c -> (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  }

  /** The name with a backslash doubled and every character outside printable ASCII as a backslash-u escape. */
  private static String escaped(String name) {
    StringBuilder out = new StringBuilder(name.length());
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (c == '\\') {
        out.append("\\\\");
      } else if (c >= 0x20 && c < 0x7f) {
        out.append(c);
      } else {
        out.append(String.format("\\u%04x", (int) c));
      }
    }
    return out.toString();
  }

  /** A 404 {@code NOT_FOUND.<what>} problem, titled "<What> not found". */
  public static ApiProblem notFound(String what, String detail) {
    String title = Character.toUpperCase(what.charAt(0)) + what.substring(1).replace('_', ' ') + " not found";
    return new ApiProblem(Problem.of(404, "NOT_FOUND." + what, title).withDetail(detail));
  }
}
