package dev.idem.console.internal;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.Problem;

/** The console's problem codes, and the exception that carries one out of a route. */
public final class ConsoleProblems {
  /** 403: the console has no authorizer yet. */
  public static final ProblemCode NOT_CONFIGURED = ProblemCode.of("CONSOLE.not_configured", 403, false,
      "Console not configured");
  /** 403: the authorizer refused a known caller. */
  public static final ProblemCode FORBIDDEN = ProblemCode.of("CONSOLE.forbidden", 403, false,
      "Console access refused");
  /** 403: a Host outside the allow-list (DNS rebinding, or a name not configured). */
  public static final ProblemCode HOST_NOT_ALLOWED = ProblemCode.of("CONSOLE.host_not_allowed", 403, false,
      "Host not allowed");
  /** 403: a request another site's page made the browser send. */
  public static final ProblemCode CROSS_SITE = ProblemCode.of("CONSOLE.cross_site", 403, false,
      "Cross-site request refused");
  /** 403: an action without the console's request header. */
  public static final ProblemCode ACTION_HEADER = ProblemCode.of("CONSOLE.action_header_missing", 403, false,
      "Console header missing");
  /** 404: no console file of that name. */
  public static final ProblemCode FILE_NOT_FOUND = ProblemCode.of("NOT_FOUND.console_file", 404, false,
      "Console file not found");
  /** 404: no console route of that path, or the view is not configured (no outbox, no metrics). */
  public static final ProblemCode ROUTE_NOT_FOUND = ProblemCode.of("NOT_FOUND.console_route", 404, false,
      "Not found");
  /** 405: a method the route does not answer. */
  public static final ProblemCode METHOD = ProblemCode.of("VALIDATION.method", 405, false, "Method not allowed");
  /** 414: a query string over the limit. */
  public static final ProblemCode URI_TOO_LONG = ProblemCode.of("VALIDATION.uri_too_long", 414, false,
      "URI too long");
  /** 409: an action on a record whose lease is still live. */
  public static final ProblemCode RECORD_LEASE_LIVE = ProblemCode.of("CONFLICT.record.lease_live", 409, false,
      "Record lease is live");
  /** 409: an action on a record that changed since it was read. */
  public static final ProblemCode RECORD_CHANGED = ProblemCode.of("CONFLICT.record.changed", 409, false,
      "Record changed");
  /** 409: a resolution of a record that is not uncertain. */
  public static final ProblemCode RECORD_NOT_UNCERTAIN = ProblemCode.of("CONFLICT.record.not_uncertain", 409, false,
      "Record not uncertain");
  /** 409: a resolution of a record whose sealed data does not open (encryption at rest). */
  public static final ProblemCode RECORD_UNREADABLE = ProblemCode.of("CONFLICT.record.unreadable", 409, false,
      "Record unreadable");
  /** 500: the console failed in a way it did not foresee (the server's log has the exception). */
  public static final ProblemCode INTERNAL = ProblemCode.of("INTERNAL.console", 500, false, "Console error");
  /** 409: a replay of a pending event. */
  public static final ProblemCode OUTBOX_PENDING = ProblemCode.of("CONFLICT.outbox.pending", 409, false,
      "Event pending");
  /** 409: a discard of an event a relay is sending. */
  public static final ProblemCode OUTBOX_IN_FLIGHT = ProblemCode.of("CONFLICT.outbox.in_flight", 409, true,
      "Event in flight");
  /** 409: a discard of a delivered or discarded event. */
  public static final ProblemCode OUTBOX_FINISHED = ProblemCode.of("CONFLICT.outbox.finished", 409, false,
      "Event finished");

  private ConsoleProblems() {}

  /** A 400 {@code VALIDATION.<field>} problem. */
  public static Refusal invalid(String field, String detail) {
    return new Refusal(Problem.of(400, "VALIDATION." + field, "Invalid request").withDetail(detail));
  }

  /** A 404 {@code NOT_FOUND.<what>} problem. */
  public static Refusal notFound(String what, String detail) {
    return new Refusal(Problem.of(404, "NOT_FOUND." + what, "Not found").withDetail(detail));
  }

  /** A problem a route answers instead of its document. */
  public static final class Refusal extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Problem problem;

    public Refusal(Problem problem) {
      super(problem.toString(), null, false, false);
      this.problem = problem;
    }

    public Problem problem() {
      return problem;
    }
  }
}
