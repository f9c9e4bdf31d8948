package dev.idem.servlet.conditional;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The {@code If-Match} and {@code If-None-Match} preconditions of one request, and their evaluation against the
 * resource's current entity-tag as RFC 9110 section 13.2.2 orders it. Immutable and thread-safe. The date
 * preconditions ({@code If-Unmodified-Since}, {@code If-Modified-Since}) are not evaluated: resources with
 * entity-tags do not need them.
 *
 * <p>The entry point for a handler that knows the current state:
 *
 * <pre>{@code
 * ETag current = account == null ? null : ETag.ofVersion(account.version());
 * if (!Preconditions.require(request, response, current, Preconditions.Requirement.IF_MATCH)) {
 *   return; // 304, 400, 412 or 428 was written
 * }
 * }</pre>
 *
 * <p>A handler that must not read before it writes (the version check and the write in one statement) asks
 * {@link #check} first, then turns the request into a {@link VersionCondition} for its {@code WHERE} clause:
 *
 * <pre>{@code
 * Preconditions pre = Preconditions.of(request);
 * Preconditions.Result early = pre.check(Preconditions.Requirement.IF_MATCH);
 * if (!early.proceed()) { early.write(response, null); return; }
 * VersionCondition expected = pre.versionCondition();
 * if (!expected.updatable()) { Preconditions.Result.failed("no version can match").write(response, null); return; }
 * // UPDATE t SET ..., version = version + 1 WHERE id = ?" + expected.sql("version") -> 0 rows: 412 (or 404)
 * }</pre>
 *
 * <p>Answers: 412 {@code CONFLICT.precondition_failed} when a condition is false (for {@code GET}/{@code HEAD}, a
 * matching {@code If-None-Match} is 304 Not Modified instead); 428 {@code VALIDATION.precondition_required} when the
 * route requires a precondition and the request has none; 400 {@code VALIDATION.precondition_malformed} for a
 * header that is not {@code *} or a list of quoted entity-tags on an unsafe method (a safe method ignores such a
 * header: its full answer is always correct). None is retryable: the same request gets the same answer until the
 * client reads the resource again.
 *
 * <p>RFC 9110 section 13.2.1 asks a server to ignore preconditions when the request would fail without them; so a
 * handler answers 404 for a resource that does not exist and cannot be created <em>before</em> it evaluates them.
 */
public final class Preconditions {
  public static final String IF_MATCH = "If-Match";
  public static final String IF_NONE_MATCH = "If-None-Match";
  public static final String ETAG = "ETag";

  /** What a route demands of a request before it may change state. */
  public enum Requirement {
    /** Preconditions are optional. */
    NONE,
    /** {@code If-Match}, or {@code If-None-Match: *}, must be present (a create-or-replace route). */
    ANY,
    /** {@code If-Match} must be present (an update of a resource that exists). */
    IF_MATCH
  }

  /** The kinds of {@link Result}. */
  public enum Outcome {
    /** Go on with the request. */
    PROCEED(0),
    /** 304: the client's cached representation is current ({@code GET}/{@code HEAD} only). */
    NOT_MODIFIED(304),
    /** 400: a precondition header cannot be parsed. */
    MALFORMED(400),
    /** 412: a precondition is false. */
    FAILED(412),
    /** 428: the route requires a precondition and the request has none. */
    REQUIRED(428);

    private final int status;

    Outcome(int status) {
      this.status = status;
    }

    /** The HTTP status, 0 for {@link #PROCEED}. */
    public int status() {
      return status;
    }
  }

  /** The verdict of the preconditions for one request: an {@link Outcome} and why. Immutable. */
  public static final class Result {
    private static final Result PROCEED = new Result(Outcome.PROCEED, "the preconditions hold");

    private final Outcome outcome;
    private final String detail;

    private Result(Outcome outcome, String detail) {
      this.outcome = outcome;
      this.detail = detail;
    }

    /**
     * A 412 decided by the handler itself, typically when an atomic conditional write changed no row (see
     * {@link VersionCondition}).
     *
     * @param detail why, in words a client can act on
     */
    public static Result failed(String detail) {
      return new Result(Outcome.FAILED, Objects.requireNonNull(detail, "detail"));
    }

    /**
     * A 428 decided by the handler itself, when the request has a precondition but not one the route accepts.
     *
     * @param detail which precondition to send
     */
    public static Result required(String detail) {
      return new Result(Outcome.REQUIRED, Objects.requireNonNull(detail, "detail"));
    }

    public Outcome outcome() {
      return outcome;
    }

    /** Whether the handler may go on. */
    public boolean proceed() {
      return outcome == Outcome.PROCEED;
    }

    /** Why, in words a client can act on. */
    public String detail() {
      return detail;
    }

    /** The problem to answer with, for 400, 412 and 428; empty for {@link Outcome#PROCEED} and 304. */
    public Optional<Problem> problem() {
      switch (outcome) {
        case MALFORMED:
          return Optional.of(Problem.of(ProblemCode.PRECONDITION_MALFORMED)
              .withDetail(detail));
        case FAILED:
          return Optional.of(Problem.of(ProblemCode.PRECONDITION_FAILED)
              .withDetail(detail));
        case REQUIRED:
          return Optional.of(Problem.of(ProblemCode.PRECONDITION_REQUIRED)
              .withDetail(detail));
        default:
          return Optional.empty();
      }
    }

    /**
     * Writes the answer for an outcome other than {@link Outcome#PROCEED}: 304 with the {@code ETag} and no body,
     * or the problem (with the {@code ETag} of the current representation, when known, on a 412). The response
     * must not be committed.
     *
     * @param current the current representation's tag, or null when unknown or absent
     * @throws IllegalStateException for {@link Outcome#PROCEED}
     */
    public void write(HttpServletResponse response, ETag current) throws IOException {
      if (outcome == Outcome.PROCEED) {
        throw new IllegalStateException("nothing to write: the preconditions hold");
      }
      if (current != null && (outcome == Outcome.NOT_MODIFIED || outcome == Outcome.FAILED)) {
        response.setHeader(ETAG, current.toString());
      }
      if (outcome == Outcome.NOT_MODIFIED) {
        response.setStatus(304);
        return;
      }
      problem().orElseThrow().write(response);
    }

    @Override
    public String toString() {
      return outcome + ": " + detail;
    }
  }

  private final String method;
  private final Header ifMatch;
  private final Header ifNoneMatch;

  private Preconditions(String method, Header ifMatch, Header ifNoneMatch) {
    this.method = method;
    this.ifMatch = ifMatch;
    this.ifNoneMatch = ifNoneMatch;
  }

  /** The preconditions of a request: its method and every line of its two headers. */
  public static Preconditions of(HttpServletRequest request) {
    return of(request.getMethod(), lines(request, IF_MATCH), lines(request, IF_NONE_MATCH));
  }

  /**
   * The preconditions of a request given by its parts.
   *
   * @param ifMatch the lines of the {@code If-Match} field, empty when absent
   * @param ifNoneMatch the lines of the {@code If-None-Match} field, empty when absent
   */
  public static Preconditions of(String method, List<String> ifMatch, List<String> ifNoneMatch) {
    Objects.requireNonNull(method, "method");
    return new Preconditions(method, Header.of(ifMatch), Header.of(ifNoneMatch));
  }

  private static List<String> lines(HttpServletRequest request, String name) {
    var values = request.getHeaders(name);
    return values == null ? List.of() : Collections.list(values);
  }

  /**
   * Evaluates the preconditions and writes the answer unless the handler may go on: the entry point for a handler
   * that has read the resource's current state.
   *
   * @param current the current representation's tag, or null when the resource does not exist
   * @return true when the handler may go on; false when 304, 400, 412 or 428 was written
   */
  public static boolean require(HttpServletRequest request, HttpServletResponse response, ETag current,
      Requirement requirement) throws IOException {
    Result result = of(request).evaluate(current, requirement);
    if (result.proceed()) {
      return true;
    }
    result.write(response, current);
    return false;
  }

  /** Whether the request is {@code GET} or {@code HEAD}, for which a matching {@code If-None-Match} is 304. */
  public boolean isRead() {
    return method.equals("GET") || method.equals("HEAD");
  }

  private boolean isSafe() {
    return isRead() || method.equals("OPTIONS") || method.equals("TRACE");
  }

  /** The parsed {@code If-Match}; empty when absent or malformed. */
  public Optional<ETagList> ifMatch() {
    return Optional.ofNullable(ifMatch.list);
  }

  /** The parsed {@code If-None-Match}; empty when absent or malformed. */
  public Optional<ETagList> ifNoneMatch() {
    return Optional.ofNullable(ifNoneMatch.list);
  }

  /**
   * What can be decided without the resource's state: 400 for a malformed header on an unsafe method, 428 when the
   * requirement is not met; else {@link Outcome#PROCEED}.
   */
  public Result check(Requirement requirement) {
    Objects.requireNonNull(requirement, "requirement");
    if (!isSafe()) {
      if (ifMatch.malformed) {
        return malformed(IF_MATCH);
      }
      if (ifNoneMatch.malformed) {
        return malformed(IF_NONE_MATCH);
      }
    }
    boolean hasIfMatch = ifMatch.present && !ifMatch.malformed;
    boolean hasIfNoneMatch = ifNoneMatch.present && !ifNoneMatch.malformed;
    if (requirement == Requirement.IF_MATCH && !hasIfMatch) {
      return new Result(Outcome.REQUIRED, method + " on this resource requires If-Match with the ETag of the"
          + " representation the change is based on: GET it, then send its ETag");
    }
    // If-None-Match with entity-tags guards against nothing on a write: only "*" (create when absent) counts
    boolean createOnly = hasIfNoneMatch && ifNoneMatch.list.isAny();
    if (requirement == Requirement.ANY && !hasIfMatch && !createOnly) {
      return new Result(Outcome.REQUIRED, method + " on this resource requires If-Match with the ETag of the"
          + " representation it replaces, or If-None-Match: * to create it only when absent");
    }
    return Result.PROCEED;
  }

  /** {@link #evaluate(ETag, Requirement)} for a route that requires nothing. */
  public Result evaluate(ETag current) {
    return evaluate(current, Requirement.NONE);
  }

  /**
   * Evaluates the preconditions in the order of RFC 9110 section 13.2.2: the {@link #check} first, then
   * {@code If-Match} by strong comparison (false: 412), then {@code If-None-Match} by weak comparison (a match: 304
   * for {@code GET}/{@code HEAD}, 412 otherwise). Never writes anything.
   *
   * @param current the current representation's tag, or null when the resource does not exist
   */
  public Result evaluate(ETag current, Requirement requirement) {
    Result early = check(requirement);
    if (!early.proceed()) {
      return early;
    }
    if (ifMatch.list != null && !ifMatch.list.matchesStrongly(current)) {
      return new Result(Outcome.FAILED, current == null
          ? "If-Match: " + ifMatch.list + " but the resource does not exist"
          : "If-Match: " + ifMatch.list + " does not match the current ETag " + current
              + " (strong comparison: weak tags never match); GET the resource again and retry with its ETag");
    }
    if (ifNoneMatch.list != null && ifNoneMatch.list.matchesWeakly(current)) {
      if (isRead()) {
        return new Result(Outcome.NOT_MODIFIED, "the current ETag " + current + " matches If-None-Match");
      }
      return new Result(Outcome.FAILED, ifNoneMatch.list.isAny()
          ? "If-None-Match: * but the resource already exists (ETag " + current + ")"
          : "If-None-Match: " + ifNoneMatch.list + " matches the current ETag " + current);
    }
    return Result.PROCEED;
  }

  /**
   * The preconditions as a condition on a version column, for a write whose version check and change are one
   * statement; for resources whose tags are {@link ETag#ofVersion}. Call it after {@link #check} proceeded.
   */
  public VersionCondition versionCondition() {
    return VersionCondition.of(ifMatch.list, ifNoneMatch.list);
  }

  private Result malformed(String header) {
    return new Result(Outcome.MALFORMED, header + " must be * or a comma-separated list of quoted entity-tags"
        + " (\"v1\" or W/\"v1\"), at most " + ETagList.MAX_TAGS + " tags and " + ETagList.MAX_LENGTH
        + " characters");
  }

  @Override
  public String toString() {
    return method + " If-Match: " + ifMatch + ", If-None-Match: " + ifNoneMatch;
  }

  /** One header: absent, malformed, or parsed. */
  private static final class Header {
    final boolean present;
    final boolean malformed;
    final ETagList list;

    private Header(boolean present, boolean malformed, ETagList list) {
      this.present = present;
      this.malformed = malformed;
      this.list = list;
    }

    static Header of(List<String> lines) {
      if (lines == null || lines.isEmpty()) {
        return new Header(false, false, null);
      }
      Optional<ETagList> list = ETagList.parse(lines);
      return new Header(true, list.isEmpty(), list.orElse(null));
    }

    @Override
    public String toString() {
      return !present ? "(absent)" : malformed ? "(malformed)" : list.toString();
    }
  }
}
