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

  /** A 400 {@code VALIDATION.<field>} problem, not retryable. */
  public static ApiProblem invalid(String field, String detail) {
    return new ApiProblem(Problem.of(400, "VALIDATION." + field, "Invalid request").withDetail(detail));
  }

  /** A 404 {@code NOT_FOUND.<what>} problem, titled "<What> not found". */
  public static ApiProblem notFound(String what, String detail) {
    String title = Character.toUpperCase(what.charAt(0)) + what.substring(1).replace('_', ' ') + " not found";
    return new ApiProblem(Problem.of(404, "NOT_FOUND." + what, title).withDetail(detail));
  }
}
