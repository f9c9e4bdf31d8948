package dev.idem.servlet;

import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdemException;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.InvalidKeyException;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.ResponseTooLargeException;
import dev.idem.core.Scope;
import dev.idem.core.StoreException;
import dev.idem.core.StoredResponse;
import dev.idem.core.WorkFailedException;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.fingerprint.Fingerprinter;
import dev.idem.core.fingerprint.MalformedJsonException;
import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.internal.BufferedRequest;
import dev.idem.servlet.internal.CapturedResponse;
import dev.idem.servlet.internal.StoredProblems;
import dev.idem.servlet.spi.RouteResolver;
import dev.idem.servlet.spi.ScopeResolver;
import dev.idem.servlet.spi.TransactionBoundary;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Idem's HTTP contract (docs/architecture.md#http-contract) as a Jakarta Servlet filter. For each unsafe request on an
 * {@link IdempotentRoute} it validates the {@code Idempotency-Key}, resolves the scope, buffers the body (up to a
 * limit) and lets the {@link Idem} executor decide: run the handler and keep its answer, replay a kept answer byte
 * for byte, or refuse with an RFC 9457 problem (payload mismatch, request in progress). Safe methods and requests
 * on other routes pass untouched.
 *
 * <pre>{@code
 * IdempotencyFilter filter = IdempotencyFilter.builder(idem)
 *     .route(IdempotentRoute.atomic("POST", "/orders"))
 *     .route(IdempotentRoute.phased("POST", "/payments"))
 *     .build();
 * }</pre>
 *
 * <p>Responses of idempotent routes are buffered up to the operation's {@code maxResponseBytes}; a handler that
 * writes more gets an {@code IOException} on write, and the client gets a 500 problem
 * {@code INTERNAL.response_too_large}: an atomic route keeps nothing (rolled back), a leased route's record keeps
 * that problem in the answer's place (the work ran) and replays it. Routes that stream large or unbounded bodies
 * should not be idempotent routes. Thread-safe once built.
 */
public final class IdempotencyFilter implements Filter {
  /** {@link IdemHeaders#IDEMPOTENCY_KEY}, kept for existing code. */
  public static final String KEY_HEADER = IdemHeaders.IDEMPOTENCY_KEY;
  /** {@link IdemHeaders#IDEMPOTENCY_STATUS}, kept for existing code. */
  public static final String STATUS_HEADER = IdemHeaders.IDEMPOTENCY_STATUS;
  /** {@link IdemHeaders#IDEMPOTENT_REPLAYED}, kept for existing code. */
  public static final String REPLAYED_HEADER = IdemHeaders.IDEMPOTENT_REPLAYED;
  /** The 401 detail unless {@link Builder#unauthenticatedDetail} says otherwise. */
  public static final String DEFAULT_UNAUTHENTICATED_DETAIL =
      "idempotent requests must be authenticated: keys belong to the caller's scope";
  /** The default request body limit: 1 MiB. */
  public static final int DEFAULT_MAX_REQUEST_BYTES = 1 << 20;
  /** Response headers kept for replays unless configured otherwise; Content-Type is always kept. */
  public static final Set<String> DEFAULT_KEPT_HEADERS = IdemHeaders.KEPT_BY_DEFAULT;

  private static final System.Logger LOG = System.getLogger(IdempotencyFilter.class.getName());
  private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

  private final Idem idem;
  private final RouteResolver routes;
  private final ScopeResolver scopes;
  private final TransactionBoundary boundary;
  private final int maxRequestBytes;
  private final int mismatchStatus;
  private final Set<String> keptHeaders;
  private final boolean keepOnlyStartedHandlers;
  private final boolean atomicFirstAttempts;
  private final boolean phasedFirstAttempts;
  private final String unauthenticatedDetail;
  private final Function<RecordKey, String> recordLink;
  private final Map<OperationPolicy, Fingerprinter> fingerprinters = new ConcurrentHashMap<>();

  private IdempotencyFilter(Builder b) {
    this.idem = b.idem;
    this.routes = b.resolver != null ? b.resolver : table(b.routes, b.pathPrefix);
    this.scopes = b.scopes;
    this.boundary = b.boundary;
    this.maxRequestBytes = b.maxRequestBytes;
    this.mismatchStatus = b.mismatchStatus;
    this.keepOnlyStartedHandlers = b.keepOnlyStartedHandlers;
    this.atomicFirstAttempts = b.atomicFirstAttempts;
    this.phasedFirstAttempts = b.phasedFirstAttempts;
    this.unauthenticatedDetail = b.unauthenticatedDetail;
    this.recordLink = b.recordLink;
    Set<String> kept = new LinkedHashSet<>();
    b.keptHeaders.forEach(h -> kept.add(h.toLowerCase(Locale.ROOT)));
    this.keptHeaders = Collections.unmodifiableSet(kept);
  }

  public static Builder builder(Idem idem) {
    return new Builder(idem);
  }

  private static RouteResolver table(List<IdempotentRoute> configured, String prefix) {
    List<IdempotentRoute> sorted = new ArrayList<>(configured);
    sorted.sort(Comparator.comparingInt(IdempotentRoute::specificity).reversed());
    List<IdempotentRoute> frozen = List.copyOf(sorted);
    return request -> {
      String method = request.getMethod();
      String path = pathWithinApplication(request);
      if (!prefix.isEmpty()) {
        if (!path.startsWith(prefix + "/")) {
          return Optional.empty();
        }
        path = path.substring(prefix.length());
      }
      for (IdempotentRoute r : frozen) {
        if (r.matches(method, path)) {
          return Optional.of(r);
        }
      }
      return Optional.empty();
    };
  }

  /** The request path without the context path: servlet path plus path info. */
  public static String pathWithinApplication(HttpServletRequest request) {
    String servletPath = request.getServletPath();
    String pathInfo = request.getPathInfo();
    String path = (servletPath == null ? "" : servletPath) + (pathInfo == null ? "" : pathInfo);
    return path.isEmpty() ? "/" : path;
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)
        || SAFE_METHODS.contains(((HttpServletRequest) req).getMethod())) {
      chain.doFilter(req, res);
      return;
    }
    HttpServletRequest request = (HttpServletRequest) req;
    HttpServletResponse response = (HttpServletResponse) res;
    Optional<IdempotentRoute> match = routes.resolve(request);
    if (match.isEmpty()) {
      chain.doFilter(req, res);
      return;
    }
    IdempotentRoute route = match.get();
    List<String> values = Collections.list(request.getHeaders(KEY_HEADER));
    if (values.isEmpty()) {
      if (route.keyRequired()) {
        refuse(request, response, Problem.of(ProblemCode.IDEMPOTENCY_KEY_MISSING)
            .withDetail(route.operation() + " requires an Idempotency-Key header: a unique value per intent,"
                + " such as a UUID, sent again unchanged on every retry"));
      } else {
        chain.doFilter(req, res);
      }
      return;
    }
    IdempotencyKey key;
    try {
      key = parseKey(values);
    } catch (InvalidKeyException e) {
      // the message names positions and code points, never the value itself (it may hold control characters)
      refuse(request, response, Problem.of(ProblemCode.IDEMPOTENCY_KEY_INVALID)
          .withDetail(e.getMessage()));
      return;
    }
    String keyHeader = values.get(0);
    // from here on every answer carries the valid key back, refusals included
    Optional<Scope> scope;
    try {
      scope = scopes.resolve(request);
    } catch (InvalidKeyException e) {
      // Scope refuses what no store can hold: more than Scope.MAX_LENGTH characters, control characters and unpaired
      // surrogates (PostgreSQL refuses a NUL). The scope itself (a principal's name) is not repeated.
      response.setHeader(KEY_HEADER, keyHeader);
      refuse(request, response, Problem.of(ProblemCode.SCOPE_INVALID)
          .withDetail("the scope this request authenticated as is longer than " + Scope.MAX_LENGTH + " characters,"
              + " or holds a control character or an unpaired surrogate, which the idempotency store cannot hold;"
              + " nothing was applied"));
      return;
    } catch (IllegalArgumentException e) {
      scope = Optional.empty();
    }
    if (scope.isEmpty()) {
      response.setHeader(KEY_HEADER, keyHeader);
      refuse(request, response, Problem.of(ProblemCode.UNAUTHENTICATED).withDetail(unauthenticatedDetail));
      return;
    }
    String contentType;
    try {
      contentType = request.getContentType();
    } catch (IllegalArgumentException e) {
      // Jetty 12 throws UnsupportedCharsetException here when the charset parameter names one the JVM does not know
      response.setHeader(KEY_HEADER, keyHeader);
      refuse(request, response, Problem.of(ProblemCode.MEDIA_TYPE).withTitle("Unsupported charset")
          .withDetail("the Content-Type names a charset this server does not support"));
      return;
    }
    if (contentType != null && contentType.trim().toLowerCase(Locale.ROOT).startsWith("multipart/")) {
      response.setHeader(KEY_HEADER, keyHeader);
      refuse(request, response, Problem.of(ProblemCode.MEDIA_TYPE)
          .withTitle("Multipart bodies are not accepted here")
          .withDetail("idempotent routes take JSON, form-encoded or other single-part bodies"));
      return;
    }
    byte[] body;
    boolean streamTaken = false;
    try {
      body = BufferedRequest.readBody(request, maxRequestBytes);
    } catch (IllegalStateException e) {
      // getReader() was called before this filter: the stream is not to be had any more
      body = new byte[0];
      streamTaken = true;
    }
    if (body == null) {
      response.setHeader(KEY_HEADER, keyHeader);
      // read the rest (bounded) so that the client gets the answer; a larger body closes the connection
      HttpBodies.discardOrClose(request, response, HttpBodies.MAX_DISCARDED_BYTES);
      Problem.of(ProblemCode.REQUEST_TOO_LARGE)
          .withDetail("the request body is larger than the limit of " + maxRequestBytes + " bytes")
          .write(response);
      return;
    }
    // Something before this filter may have read the body: Spring's FormContentFilter (PUT, PATCH, DELETE forms), or
    // anything that asked a form POST for a parameter (a CSRF filter), which makes the container parse the body.
    long declared = request.getContentLengthLong();
    boolean readBefore = streamTaken || declared > body.length;
    byte[] fingerprinted = body;
    boolean parametersFromBody = true;
    if (readBefore || body.length == 0 && BufferedRequest.formEncoded(contentType)) {
      Map<String, List<String>> fields = BufferedRequest.formEncoded(contentType)
          ? BufferedRequest.bodyParameters(request) : Map.of();
      if (!fields.isEmpty()) {
        // the form's fields as the container (or a wrapper before) parsed them, in a canonical form
        fingerprinted = BufferedRequest.canonicalForm(fields);
        body = new byte[0];
        parametersFromBody = false;
      } else if (readBefore) {
        LOG.log(System.Logger.Level.ERROR, "Idem '" + idem.name() + "': the body of a request to " + route.operation()
            + " was read before the idempotency filter (" + (streamTaken ? "getReader() was called"
                : body.length + " of " + declared + " bytes were left") + "); refused. Put the idempotency filter"
            + " before every filter that reads request bodies");
        response.setHeader(KEY_HEADER, keyHeader);
        Problem.of(ProblemCode.BODY_READ_BEFORE_FILTER)
            .withDetail("something on this server read the request body before the idempotency filter, so this request"
                + " cannot be told from another with the same key; nothing was applied. This is a fault of the"
                + " server's set-up, not of the request")
            .write(response);
        return;
      }
    }
    IdempotentRequest idempotent =
        IdempotentRequest.of(new RecordKey(scope.get(), route.operation(), key), fingerprinted, contentType);
    boolean trustFirstAttempt = route.mode() == IdempotentRoute.Mode.ATOMIC ? atomicFirstAttempts
        : route.mode() == IdempotentRoute.Mode.PHASED && phasedFirstAttempts;
    if (trustFirstAttempt
        && IdemHeaders.attempt(request.getHeader(IdemHeaders.IDEMPOTENCY_ATTEMPT)).orElse(0) == 1) {
      idempotent = idempotent.firstAttempt(true);
    }
    // The fingerprint covers the concrete path and query, not only the route: the same key sent to
    // /accounts/A/refunds and then to /accounts/B/refunds is two requests, and the second must not replay the first.
    String target = target(route, request);
    try {
      idempotent = idempotent.fingerprinted(fingerprinted.length > 0 && Fingerprinter.isJsonMediaType(contentType)
          ? fingerprinter(route).fingerprintJson(target, fingerprinted)
          : fingerprinter(route).fingerprint(target, fingerprinted, contentType));
    } catch (MalformedJsonException e) {
      // A body declared as JSON must be JSON: refuse it before anything runs, instead of hashing it raw.
      response.setHeader(KEY_HEADER, keyHeader);
      Problem.of(ProblemCode.MALFORMED_JSON)
          .withDetail(e.reason() + " at line " + e.line() + ", column " + e.column()).write(response);
      return;
    }
    IdempotentExchange exchange = new IdempotentExchange(this, route, idempotent, keyHeader);
    BufferedRequest buffered = new BufferedRequest(request, body, parametersFromBody);
    buffered.setAttribute(IdempotentExchange.ATTRIBUTE, exchange);
    try {
      switch (route.mode()) {
        case PHASED:
          chain.doFilter(buffered, response);
          break;
        case ATOMIC:
        case LEASED:
          runAround(exchange, buffered, response, chain);
          break;
        default:
          throw new IllegalStateException(route.mode().name());
      }
    } catch (IOException | ServletException | RuntimeException e) {
      if (!answerFailure(exchange, e, response)) {
        throw e;
      }
    } finally {
      buffered.removeAttribute(IdempotentExchange.ATTRIBUTE);
    }
  }

  /**
   * What the fingerprint hashes besides the body: the method, the path within the application and the query
   * parameters sorted by name, as sent otherwise, so that reordering parameters is the same request. The sort is
   * stable: the values of a name given more than once keep their order ({@code ?sort=date&sort=amount} is not
   * {@code ?sort=amount&sort=date}). Empty parameters ({@code ?a=1&&b=2}, a trailing {@code &}) are dropped.
   */
  static String target(IdempotentRoute route, HttpServletRequest request) {
    // The raw (still percent-encoded) path: it cannot hold a line feed or any other control character.
    String uri = request.getRequestURI();
    String context = request.getContextPath();
    String path = context != null && !context.isEmpty() && uri.startsWith(context) ? uri.substring(context.length())
        : uri;
    String query = request.getQueryString();
    if (query == null || query.isEmpty()) {
      return route.method() + " " + path;
    }
    List<String> parameters = new ArrayList<>();
    for (String parameter : query.split("&")) {
      if (!parameter.isEmpty()) {
        parameters.add(parameter);
      }
    }
    if (parameters.isEmpty()) {
      return route.method() + " " + path;
    }
    parameters.sort(Comparator.comparing(IdempotencyFilter::parameterName));
    return route.method() + " " + path + "?" + String.join("&", parameters);
  }

  /** A query parameter's name as sent: up to its first {@code =}, or all of it. */
  private static String parameterName(String parameter) {
    int eq = parameter.indexOf('=');
    return eq < 0 ? parameter : parameter.substring(0, eq);
  }

  private Fingerprinter fingerprinter(IdempotentRoute route) {
    OperationPolicy policy = idem.policy(route.operation());
    return fingerprinters.computeIfAbsent(policy, p -> Fingerprinter.of(p.fingerprint()));
  }

  private void runAround(IdempotentExchange exchange, BufferedRequest request, HttpServletResponse response,
      FilterChain chain) throws IOException, ServletException {
    int limit = idem.policy(exchange.recordKey().operation()).maxResponseBytes();
    CapturedResponse[] live = new CapturedResponse[1];
    Execution execution;
    try {
      execution = boundary.around(exchange, () -> {
        if (exchange.route().mode() == IdempotentRoute.Mode.ATOMIC) {
          return idem.atomic(exchange.request(), tx -> {
            exchange.bind(tx);
            try {
              return handle(exchange, request, response, chain, limit, live);
            } finally {
              exchange.bind(null);
            }
          });
        }
        return idem.leased(exchange.request(), k -> handle(exchange, request, response, chain, limit, live));
      });
    } catch (Exception e) {
      Throwable t = e;
      for (int depth = 0; t != null && depth < 10; depth++, t = t.getCause()) {
        if (t instanceof RefusedBeforeHandlerException) {
          CapturedResponse answer = ((RefusedBeforeHandlerException) t).answer;
          response.setHeader(KEY_HEADER, exchange.keyHeader());
          send(answer.allHeaders(), answer.addedHeaders(), answer.getStatus(), answer.body(), response);
          return;
        }
      }
      if (e instanceof IOException) {
        throw (IOException) e;
      }
      if (e instanceof ServletException) {
        throw (ServletException) e;
      }
      if (e instanceof RuntimeException) {
        throw (RuntimeException) e;
      }
      throw new ServletException("transaction boundary of " + exchange.recordKey() + " failed", e);
    }
    exchange.executed(execution);
    write(exchange, execution, live[0], response);
  }

  private StoredResponse handle(IdempotentExchange exchange, BufferedRequest request, HttpServletResponse response,
      FilterChain chain, int limit, CapturedResponse[] live) throws IOException, ServletException {
    if (live[0] != null) {
      // The executor retries a round after a transient store failure; the rest of the chain cannot run twice.
      throw new StoreUnavailableAfterHandlerException();
    }
    CapturedResponse captured = new CapturedResponse(response, limit);
    live[0] = captured;
    exchange.workRan();
    try {
      chain.doFilter(request, captured);
    } catch (IOException | ServletException | RuntimeException e) {
      if (appliedTooLarge(exchange, captured)) {
        ResponseTooLargeException tooLarge = new ResponseTooLargeException(exchange.recordKey(), limit, limit);
        tooLarge.addSuppressed(e);
        throw tooLarge;
      }
      throw e;
    }
    if (appliedTooLarge(exchange, captured)) {
      throw new ResponseTooLargeException(exchange.recordKey(), limit, limit);
    }
    if (request.isAsyncStarted()) {
      throw new IllegalStateException("the handler of " + IdempotentExchange.current(request).route()
          + " started asynchronous processing; idempotent routes need the answer when the handler returns"
          + " (nothing was kept)");
    }
    int status = captured.getStatus();
    if (keepOnlyStartedHandlers && status >= 400 && status < 500
        && !IdempotentExchange.current(request).handlerStarted()) {
      // refused before the handler ran: roll back (atomic) or release the key (leased), and pass the answer on
      throw new RefusedBeforeHandlerException(captured);
    }
    return StoredResponse.of(status, captured.headersToKeep(keptHeaders), captured.body());
  }

  /**
   * A leased handler wrote an answer past the bound: its work ran and is not rolled back. When its status is one the
   * operation keeps, the executor is told so ({@link ResponseTooLargeException}), and keeps a substitute answer in
   * the record so that a retry replays it instead of running the work again (the caller throws it); otherwise the
   * failure goes on as it is.
   */
  private boolean appliedTooLarge(IdempotentExchange exchange, CapturedResponse captured) {
    return exchange.route().mode() == IdempotentRoute.Mode.LEASED && captured.overflowed()
        && idem.policy(exchange.recordKey().operation()).keep().keeps(captured.getStatus());
  }

  /** The framework answered before the handler started; nothing may be kept. */
  private static final class RefusedBeforeHandlerException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient CapturedResponse answer;

    RefusedBeforeHandlerException(CapturedResponse answer) {
      super("refused before the handler started; nothing was kept", null, false, false);
      this.answer = answer;
    }
  }

  /** The store failed after the handler ran once; the transaction rolled back and the client may retry. */
  private static final class StoreUnavailableAfterHandlerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    StoreUnavailableAfterHandlerException() {
      super("the idempotency store failed transiently after the handler ran; nothing was kept", null, false, false);
    }
  }

  Execution runPhased(IdempotentExchange exchange, HttpServletResponse response) throws IOException {
    Execution execution = idem.phased(exchange.request());
    exchange.executed(execution);
    write(exchange, execution, null, response);
    return execution;
  }

  /** Writes the executor's decision with the contract's headers. */
  private void write(IdempotentExchange exchange, Execution execution, CapturedResponse live,
      HttpServletResponse response) throws IOException {
    response.setHeader(KEY_HEADER, exchange.keyHeader());
    switch (execution.outcome()) {
      case STORED:
      case NOT_STORED:
        if (execution.outcome() == Execution.Outcome.STORED) {
          response.setHeader(STATUS_HEADER, "stored");
        }
        // The live answer carries every header the handler set; the stored one only the kept headers.
        if (live != null) {
          send(live.allHeaders(), live.addedHeaders(), live.getStatus(), execution.response().body(), response);
        } else {
          send(execution.response().headers(), Set.of(), execution.response().status(), execution.response().body(),
              response);
        }
        break;
      case REPLAYED:
        response.setHeader(STATUS_HEADER, "replayed");
        response.setHeader(REPLAYED_HEADER, "true");
        StoredResponse stored = execution.response();
        send(stored.headers(), Set.of(), stored.status(), stored.body(), response);
        break;
      case PAYLOAD_MISMATCH:
        List<String> fields = execution.differingFields();
        Problem mismatch = Problem.of(ProblemCode.PAYLOAD_MISMATCH).withStatus(mismatchStatus)
            .withDetail(fields.isEmpty()
                ? "this key was first used with a different request (path, query or body); use a new key for a new"
                    + " request"
                : "this key was first used with a request whose fields " + String.join(", ", fields)
                    + " differ; use a new key for a new request");
        if (!fields.isEmpty()) {
          mismatch = mismatch.with("fields", fields);
        }
        mismatch.write(response);
        break;
      case KEY_EXPIRED:
        Problem.of(ProblemCode.KEY_EXPIRED)
            .withDetail("the answer to the first request with this key expired at " + execution.expiredAt()
                + " and is no longer kept; the request was not run again. Do not retry with this key: check whether"
                + " the first request took effect, and send a new request with a new key")
            .with("expired_at", execution.expiredAt().toString())
            .write(response);
        break;
      case UNCERTAIN:
        Problem uncertain = Problem.of(ProblemCode.OUTCOME_UNCERTAIN)
            .withDetail("the first request with this key could not be confirmed at the other system it called, and it"
                + " is not run again; an operator or a reconciler decides it, after which this request gets the"
                + " decided answer. Do not send it with a new key before then")
            .with("uncertain_since", execution.expiredAt().toString());
        String link = recordLink.apply(execution.key());
        if (link != null) {
          response.setHeader("Link", "<" + link + ">; rel=\"related\"");
          uncertain = uncertain.with("record", link);
        }
        uncertain.write(response);
        break;
      case IN_PROGRESS:
        long seconds = Math.max(1, execution.retryAfter().toSeconds()
            + (execution.retryAfter().toNanosPart() > 0 ? 1 : 0));
        response.setHeader(IdemHeaders.RETRY_AFTER, Long.toString(seconds));
        Problem.of(ProblemCode.IN_PROGRESS)
            .withDetail("the first request with this key has not finished; retry after " + seconds + " s")
            .write(response);
        break;
      default:
        throw new IllegalStateException(execution.outcome().name());
    }
  }

  /**
   * Writes an answer to the real response. A header named (in lower case) in {@code added} is appended to what is
   * there already, as the handler appended to it (every {@code Set-Cookie} of the handler's, after a session cookie a
   * filter before this one set); any other replaces it with its first value and appends the rest.
   */
  private static void send(Map<String, List<String>> headers, Set<String> added, int status, byte[] body,
      HttpServletResponse response) throws IOException {
    response.setStatus(status);
    for (Map.Entry<String, List<String>> h : headers.entrySet()) {
      boolean replace = !added.contains(h.getKey().toLowerCase(Locale.ROOT));
      for (String v : h.getValue()) {
        if (replace) {
          response.setHeader(h.getKey(), v);
          replace = false;
        } else {
          response.addHeader(h.getKey(), v);
        }
      }
    }
    String code = StoredProblems.code(headers, body);
    if (code != null) {
      // an answer kept or replayed as bytes: the code its problem document carries, for the response's listeners
      Problem.announce(response, code);
    }
    response.setContentLength(body.length);
    if (body.length > 0) {
      response.getOutputStream().write(body);
    }
  }

  /**
   * Writes a refusal given before the body was read. The body is read and discarded first, up to the request limit,
   * so that the connection stays usable; a larger or unreadable body closes it after the answer.
   */
  private void refuse(HttpServletRequest request, HttpServletResponse response, Problem problem) throws IOException {
    HttpBodies.discardOrClose(request, response, maxRequestBytes);
    problem.write(response);
  }

  /**
   * Answers the failures the contract names with a problem; returns false for the handler's own failures, which
   * propagate to the container (nothing was kept: the transaction rolled back, or the lease was released).
   */
  private boolean answerFailure(IdempotentExchange exchange, Exception e, HttpServletResponse response)
      throws IOException {
    Throwable cause = unwrap(e);
    Problem problem;
    String retryAfter = null;
    if (cause instanceof MalformedJsonException) {
      MalformedJsonException m = (MalformedJsonException) cause;
      problem = Problem.of(ProblemCode.MALFORMED_JSON)
          .withDetail(m.reason() + " at line " + m.line() + ", column " + m.column());
    } else if (cause instanceof ResponseTooLargeException && ((ResponseTooLargeException) cause).kept().isPresent()) {
      // leased work or an outside phase took effect: the record ends with the substitute, which every replay returns
      LOG.log(System.Logger.Level.ERROR, "Idem '" + idem.name() + "': the answer to " + exchange.recordKey()
          + " is larger than the operation's maxResponseBytes; the work was applied, a substitute answer is kept",
          cause);
      if (response.isCommitted()) {
        return false;
      }
      response.reset();
      response.setHeader(KEY_HEADER, exchange.keyHeader());
      response.setHeader(STATUS_HEADER, "stored");
      StoredResponse kept = ((ResponseTooLargeException) cause).kept().get();
      send(kept.headers(), Set.of(), kept.status(), kept.body(), response);
      return true;
    } else if (cause instanceof ResponseTooLargeException || cause instanceof CapturedResponse.BodyTooLargeException) {
      Optional<String> resumesAt = cause instanceof ResponseTooLargeException
          ? ((ResponseTooLargeException) cause).recoveryPoint() : Optional.empty();
      LOG.log(System.Logger.Level.ERROR, "Idem '" + idem.name() + "': the answer to " + exchange.recordKey()
          + " is larger than the operation's maxResponseBytes; nothing was kept"
          + resumesAt.map(p -> ", the record stays at its recovery point '" + p + "'").orElse(""), cause);
      problem = Problem.of(ProblemCode.RESPONSE_TOO_LARGE)
          .withDetail("the answer to this request is larger than the server keeps for idempotent requests; "
              + (resumesAt.isPresent()
                  ? "its last step was rolled back, and the steps before it stay applied and are not run again"
                  : "nothing was applied"));
    } else if (cause instanceof DecryptionException) {
      // the kept answer exists but cannot be opened: never run the work again, never retryable
      LOG.log(System.Logger.Level.ERROR, "Idem '" + idem.name() + "': the kept answer of " + exchange.recordKey()
          + " cannot be opened (" + ((DecryptionException) cause).reason() + "); nothing was run again", cause);
      problem = Problem.of(ProblemCode.RECORD_UNREADABLE)
          .withDetail("the answer kept for this Idempotency-Key cannot be read; nothing was run again. Do not retry"
              + " with this key: ask the operator of this service");
    } else if (cause instanceof StoreException && ((StoreException) cause).isSchemaFault()) {
      // a fault of the deployment (a missing table or column, a refused permission), not an outage: retrying with
      // the same key cannot help, and the database's own text stays in the log
      LOG.log(System.Logger.Level.ERROR, "Idem '" + idem.name() + "': the store refused " + exchange.recordKey()
          + "; nothing was applied", cause);
      String state = ((StoreException) cause).sqlState();
      problem = Problem.of(ProblemCode.STORE_ERROR)
          .withDetail("the idempotency store refused this request" + (state == null ? "" : " (SQLState " + state + ")")
              + "; nothing was applied. This is a fault of the server's set-up, such as a missing table: see its log");
    } else if (cause instanceof StoreException || cause instanceof StoreUnavailableAfterHandlerException) {
      LOG.log(System.Logger.Level.WARNING, "Idem '" + idem.name() + "': store failure on "
          + exchange.recordKey(), cause);
      retryAfter = "1";
      problem = Problem.of(ProblemCode.DEPENDENCY_UNAVAILABLE).withTitle("Idempotency store unavailable")
          .withDetail("the idempotency store could not be reached; " + unavailableDetail(exchange));
    } else {
      return false;
    }
    if (response.isCommitted()) {
      return false;
    }
    response.reset();
    // after the reset, which clears every header set before it
    response.setHeader(KEY_HEADER, exchange.keyHeader());
    if (retryAfter != null) {
      response.setHeader(IdemHeaders.RETRY_AFTER, retryAfter);
    }
    problem.write(response);
    return true;
  }

  /**
   * What a store failure left behind, per mode: atomic mode rolled everything back; leased work is not rolled back
   * once it ran; a phased request may have committed phases, which a retry resumes after.
   */
  private static String unavailableDetail(IdempotentExchange exchange) {
    switch (exchange.route().mode()) {
      case PHASED:
        return "steps of this request may have been applied. Retry with the same key (never a new one): the retry"
            + " resumes where this one stopped";
      case LEASED:
        if (exchange.hasWorkRun()) {
          return "this request was handled and may have been applied. Retry with the same key, never a new one";
        }
        return "nothing was applied, retry with the same key";
      default:
        return "nothing was applied, retry with the same key";
    }
  }

  /**
   * The failure the contract names, wherever a framework wrapped it: the first Idem failure within ten causes of
   * {@code e}; else the first cause that is not a wrapper of Idem's or the container's ({@link WorkFailedException},
   * {@link IdemException}, {@link ServletException}).
   */
  private static Throwable unwrap(Throwable e) {
    Throwable t = e;
    Throwable own = null;
    for (int i = 0; i < 10 && t != null; i++) {
      if (t instanceof MalformedJsonException || t instanceof ResponseTooLargeException
          || t instanceof DecryptionException || t instanceof CapturedResponse.BodyTooLargeException
          || t instanceof StoreException
          || t instanceof StoreUnavailableAfterHandlerException) {
        return t;
      }
      if (own == null
          && !(t instanceof WorkFailedException || t instanceof ServletException || t instanceof IdemException)) {
        own = t;
      }
      t = t.getCause();
    }
    return own != null ? own : t;
  }

  /**
   * Reads the key from the header's values: exactly one value, a bare key ({@code abc-123}, as most clients send it)
   * or a Structured Field string ({@code "abc-123"}); see {@link IdempotencyKey#fromHeader} for the exact rules.
   */
  static IdempotencyKey parseKey(List<String> values) {
    return IdempotencyKey.fromHeaderValues(values);
  }

  @Override
  public String toString() {
    return "IdempotencyFilter[" + idem.name() + "]";
  }

  /** Mutable, not thread-safe. {@link #build()} validates the settings. */
  public static final class Builder {
    private final Idem idem;
    private final List<IdempotentRoute> routes = new ArrayList<>();
    private RouteResolver resolver;
    private ScopeResolver scopes = ScopeResolver.principal();
    private TransactionBoundary boundary = TransactionBoundary.none();
    private int maxRequestBytes = DEFAULT_MAX_REQUEST_BYTES;
    private int mismatchStatus = 422;
    private final Set<String> keptHeaders = new LinkedHashSet<>(DEFAULT_KEPT_HEADERS);
    private String pathPrefix = "";
    private boolean keepOnlyStartedHandlers;
    private boolean atomicFirstAttempts = true;
    private boolean phasedFirstAttempts = true;
    private String unauthenticatedDetail = DEFAULT_UNAUTHENTICATED_DETAIL;
    private Function<RecordKey, String> recordLink = key -> null;

    private Builder(Idem idem) {
      this.idem = Objects.requireNonNull(idem, "idem");
    }

    /**
     * Keep a 4xx answer of an atomic or leased route only when the handler has started
     * ({@link IdempotentExchange#markHandlerStarted()}); default false: every deterministic answer is kept. Turn it
     * on when a framework between this filter and the handler can refuse a request on its own (a 400 for a body it
     * cannot bind, a 405, 406 or 415): such a refusal is then passed on without {@code Idempotency-Status}, nothing is
     * kept (atomic mode rolls back, leased mode frees the key), and the corrected retry with the same key runs. The
     * handler, or an interceptor around it, marks every request it accepts; a 2xx or 3xx answer is kept whether
     * marked or not, since no framework answers with one on its own.
     */
    public Builder keepOnlyStartedHandlers(boolean on) {
      this.keepOnlyStartedHandlers = on;
      return this;
    }

    /**
     * Whether a request that says it is its sender's first attempt ({@code Idempotency-Attempt: 1}, as idem-client
     * sends it) skips the look-up of its record, on an atomic route before the work and on a phased route before the
     * first phase (default true for both). Such a request is unlikely to be a duplicate, so the record's unique key
     * decides at commit: the one round trip saved is about a quarter of a small transaction's cost. Retries (attempt 2
     * and more) and requests without the header still look the record up first, so a retry after the original
     * committed never runs the work. A first attempt that is a duplicate all the same (two senders, one key) runs the
     * work (or the first phase), collides, rolls it back and replays: one execution commits either way. Turn it off
     * for clients that send attempt 1 on every try. Leased routes always look the record up (they claim it before
     * the work).
     */
    public Builder firstAttemptSkipsLookup(boolean on) {
      return firstAttemptSkipsLookup(on, on);
    }

    /**
     * {@link #firstAttemptSkipsLookup(boolean)} per kind of route. An atomic route's rollback undoes a duplicate's work
     * only when the handler writes in the record's transaction (the {@link #transactionBoundary} joins it, or the
     * handler uses {@link IdempotentExchange#transaction()}); a phased route's first phase always runs in the record's
     * transaction. The Spring Boot starter turns it off for atomic routes that do not join a Spring transaction on the
     * store's {@code DataSource}, and keeps it for phased routes.
     */
    public Builder firstAttemptSkipsLookup(boolean atomicRoutes, boolean phasedRoutes) {
      this.atomicFirstAttempts = atomicRoutes;
      this.phasedFirstAttempts = phasedRoutes;
      return this;
    }

    /**
     * The {@code detail} of the 401 {@code AUTH.unauthenticated} answer to a request whose scope the
     * {@link ScopeResolver} could not tell; say there how this application authenticates callers.
     */
    public Builder unauthenticatedDetail(String detail) {
      Objects.requireNonNull(detail, "detail");
      if (detail.isBlank()) {
        throw new IllegalArgumentException("the unauthenticated detail must not be blank");
      }
      this.unauthenticatedDetail = detail;
      return this;
    }

    /** Adds a route to the filter's route table. Not combinable with {@link #routes(RouteResolver)}. */
    public Builder route(IdempotentRoute route) {
      routes.add(Objects.requireNonNull(route, "route"));
      return this;
    }

    /**
     * The route templates are relative to this path (a servlet mapping such as {@code /api}, where the framework's
     * dispatcher is mapped to {@code /api/*}); requests outside it pass untouched. Default: none.
     */
    public Builder pathPrefix(String prefix) {
      Objects.requireNonNull(prefix, "prefix");
      String p = prefix.trim();
      while (p.endsWith("/") || p.endsWith("*")) {
        p = p.substring(0, p.length() - 1);
      }
      if (!p.isEmpty() && !p.startsWith("/")) {
        throw new IllegalArgumentException("pathPrefix must start with '/', got '" + prefix + "'");
      }
      this.pathPrefix = p;
      return this;
    }

    /** Uses a resolver instead of the route table. */
    public Builder routes(RouteResolver resolver) {
      this.resolver = Objects.requireNonNull(resolver, "resolver");
      return this;
    }

    /** Who owns a key; default {@link ScopeResolver#principal()}. */
    public Builder scope(ScopeResolver scopes) {
      this.scopes = Objects.requireNonNull(scopes, "scopes");
      return this;
    }

    public Builder transactionBoundary(TransactionBoundary boundary) {
      this.boundary = Objects.requireNonNull(boundary, "boundary");
      return this;
    }

    /** The largest request body buffered (default 1 MiB); larger bodies get 413 and nothing runs. */
    public Builder maxRequestBytes(int maxRequestBytes) {
      if (maxRequestBytes < 1) {
        throw new IllegalArgumentException("maxRequestBytes must be positive, got " + maxRequestBytes);
      }
      this.maxRequestBytes = maxRequestBytes;
      return this;
    }

    /**
     * Where an operator finds a record (an admin API's URL, say), for the answer to a request whose record is
     * uncertain: the problem gets a {@code record} member and a {@code Link: <url>; rel="related"} header. The function
     * may return {@code null} (no link); by default there is none.
     */
    public Builder recordLink(Function<RecordKey, String> recordLink) {
      this.recordLink = Objects.requireNonNull(recordLink, "recordLink");
      return this;
    }

    /** The status of a payload mismatch: 422 (default) or 409. */
    public Builder mismatchStatus(int status) {
      if (status != 422 && status != 409) {
        throw new IllegalArgumentException("mismatchStatus must be 422 or 409, got " + status);
      }
      this.mismatchStatus = status;
      return this;
    }

    /**
     * Replaces the response headers kept for replays (Content-Type is always kept). {@code Authorization},
     * {@code Cookie} and {@code Set-Cookie} are never kept, whatever this list says.
     */
    public Builder keepHeaders(String... names) {
      keptHeaders.clear();
      for (String n : names) {
        Objects.requireNonNull(n, "header name");
        if (n.isBlank()) {
          throw new IllegalArgumentException("kept header names must not be blank");
        }
        keptHeaders.add(n.trim());
      }
      return this;
    }

    public IdempotencyFilter build() {
      if (resolver != null && !routes.isEmpty()) {
        throw new IllegalStateException("configure either routes(resolver) or route(...), not both");
      }
      if (resolver == null && routes.isEmpty()) {
        throw new IllegalStateException("IdempotencyFilter for Idem '" + idem.name() + "' has no routes");
      }
      Set<String> seen = new LinkedHashSet<>();
      for (IdempotentRoute r : routes) {
        if (!seen.add(r.operation().name())) {
          throw new IllegalStateException("route " + r.operation() + " is configured twice");
        }
        if (r.mode() == IdempotentRoute.Mode.ATOMIC && !idem.policy(r.operation()).inFlightWait().isZero()) {
          // a policy shared with other operations may carry it: warn, as the setting does no harm here
          LOG.log(System.Logger.Level.WARNING, "Idem '" + idem.name() + "': the policy of atomic route "
              + r.operation() + " sets waitInFlight, which atomic mode does not use: a concurrent duplicate waits"
              + " on the store's lock timeout instead, then gets 409 in progress");
        }
      }
      return new IdempotencyFilter(this);
    }
  }
}
