package dev.idem.console;

import dev.idem.console.internal.Assets;
import dev.idem.console.internal.ConsoleProblems;
import dev.idem.console.internal.Json;
import dev.idem.console.internal.OutboxApi;
import dev.idem.console.internal.OutboxRoutes;
import dev.idem.console.internal.RecordRoutes;
import dev.idem.core.Idem;
import dev.idem.core.RecordKey;
import dev.idem.core.StoreException;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxRelay;
import dev.idem.servlet.HttpBodies;
import dev.idem.servlet.Problem;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The operator console, as one servlet any Jakarta Servlet 6 application mounts: a page (with its script and style
 * sheet) and the API it calls, over the public APIs of idem-core ({@link Idem#store()}'s admin, {@link Idem#resolve},
 * {@link Idem#history}) and, when given an {@link Outbox}, of idem-outbox. Map it at a path ending in {@code /*}:
 *
 * <pre>{@code
 * ConsoleServlet console = ConsoleServlet.builder(idem)
 *     .outbox(outbox, relay)
 *     .search(JdbcRecordSearch.of(store))
 *     .authorizer(request -> request.isUserInRole("OPERATOR")
 *         ? ConsoleAuthorizer.Decision.allow(request.getUserPrincipal().getName())
 *         : ConsoleAuthorizer.Decision.forbidden("operators only"))
 *     .allowedHosts(List.of("ops.example.com"))
 *     .build();
 * context.addServlet(new ServletHolder(console), "/idem/console/*");
 * }</pre>
 *
 * <p>Under the mapping ({@code /idem/console} here): {@code /} the page, {@code /console.js}, {@code /console.css},
 * {@code /favicon.svg}; and the API, JSON in and out, problems (RFC 9457) on refusal:
 *
 * <ul>
 *   <li>{@code GET api/session}: the operator's name, the store, and which views the console has;
 *   <li>{@code GET api/records?state=in_progress|completed|failed|uncertain|any&key=&limit=&after=}: records of every
 *       scope by state and a part of their key ({@link RecordSearch});
 *   <li>{@code DELETE api/records?scope=&operation=&key=&version=[&force=true]}: evicts a record at the version the
 *       operator saw, unless its worker holds a live lease;
 *   <li>{@code POST api/records/resolve?scope=&operation=&key=&version=} with
 *       {@code {"action":"complete"|"fail"|"retry","reason":"...","status":201,"body":{...}}}: decides an uncertain
 *       record, audited in the store with the operator as actor; {@code GET api/records/history?...}: its audit;
 *   <li>{@code GET api/outbox?status=pending|delivered|dead|discarded&type=&cursor=&limit=},
 *       {@code GET api/outbox/stats}, {@code GET api/outbox/{id}}: events (dead letters with {@code status=dead}),
 *       with their attempts; {@code POST api/outbox/{id}/replay}, {@code POST api/outbox/{id}/discard},
 *       {@code POST api/outbox/replay?status=dead[&type=]}: actions;
 *   <li>{@code GET api/metrics}: the charts' numbers, when a {@link ConsoleMetrics} is given.
 * </ul>
 *
 * <p>The security model, in the order it is applied:
 *
 * <ol>
 *   <li>every answer carries a strict Content-Security-Policy (the console's own script, style and calls only; no
 *       inline script or style, no framing), {@code Cache-Control: no-store}, {@code X-Content-Type-Options: nosniff},
 *       {@code X-Frame-Options: DENY} and {@code Referrer-Policy: no-referrer};
 *   <li>the request's {@code Host} must be on the allow-list ({@link Builder#allowedHosts}; loopback names by
 *       default): a page on another name that resolves to this server (DNS rebinding) gets 403;
 *   <li>on the API, a request a browser sent for another site's page ({@code Sec-Fetch-Site} other than
 *       {@code same-origin} or {@code none}, or an {@code Origin} other than the request's own and the
 *       {@link Builder#trustedOrigins trusted ones}) gets 403, and every action (POST, DELETE) must carry
 *       {@code X-Idem-Console: 1}, a header no form can send and no other origin can add without a CORS preflight,
 *       which the console never grants;
 *   <li>the {@link ConsoleAuthorizer} allows the request and names the operator; the default refuses everyone;
 *   <li>inputs are bounded: query strings ({@value #MAX_QUERY} characters), bodies ({@value #MAX_BODY} bytes), key
 *       parts, page sizes, reasons; every action goes to the {@link ConsoleAudit} with the operator's name.
 * </ol>
 *
 * <p>Immutable and thread-safe.
 */
public final class ConsoleServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;
  private static final System.Logger LOG = System.getLogger(ConsoleServlet.class.getName());

  /** The console's Content-Security-Policy. */
  public static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self';"
      + " img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
  /** The header every action carries; its value is {@code 1}. */
  public static final String ACTION_HEADER = "X-Idem-Console";
  /** The hosts allowed when none are configured: the loopback interface's names. */
  public static final List<String> LOOPBACK_HOSTS = List.of("localhost", "127.0.0.1", "[::1]");
  /** The longest query string, in characters. */
  public static final int MAX_QUERY = 4096;
  /** The largest request body, in bytes. */
  public static final int MAX_BODY = 64 * 1024;

  private final transient RecordRoutes records;
  /** An OutboxRoutes, or null: typed Object so that this class loads without idem-outbox. */
  private final transient Object outbox;
  private final transient ConsoleAuthorizer authorizer;
  private final transient ConsoleAudit audit;
  private final transient ConsoleMetrics metrics;
  private final transient Clock clock;
  private final transient Set<String> allowedHosts;
  private final transient Set<String> trustedOrigins;
  private final transient Assets assets;

  private ConsoleServlet(Builder b) {
    this.records = new RecordRoutes(b.idem, b.search != null ? b.search
        : RecordSearch.scanning(b.idem.store().admin(), 10_000), b.hints);
    this.outbox = b.outbox;
    this.authorizer = b.authorizer;
    this.audit = b.audit;
    this.metrics = b.metrics;
    this.clock = b.clock;
    this.allowedHosts = Set.copyOf(b.allowedHosts);
    this.trustedOrigins = Set.copyOf(b.trustedOrigins);
    this.assets = Assets.load();
  }

  /** A console over {@code idem}'s records; add the outbox, the authorizer and the rest on the builder. */
  public static Builder builder(Idem idem) {
    return new Builder(idem);
  }

  /** The hosts this console answers, lower case ({@code *} for any). */
  public Set<String> allowedHosts() {
    return allowedHosts;
  }

  /**
   * The origins, besides the request's own, whose pages the API answers ({@link Builder#trustedOrigins}), as
   * {@code scheme://host[:port]} in lower case without a default port; empty unless configured.
   */
  public Set<String> trustedOrigins() {
    return trustedOrigins;
  }

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
    secure(response);
    // the Host header as the browser sent it, never a name forwarded headers may have put in its place: a page
    // that rebinds its own name to this address can set those headers too
    String host = requestedHost(request.getHeader("Host"));
    if (!allowedHosts.contains("*") && !allowedHosts.contains(host)) {
      HttpBodies.discardOrClose(request, response, MAX_BODY);
      String shown = host.length() > 100 ? host.substring(0, 100) + "…" : host;
      Problem.of(ConsoleProblems.HOST_NOT_ALLOWED).withDetail("the console does not answer for host '" + shown
          + "': add it to the console's allowed hosts (ConsoleServlet.Builder.allowedHosts, or"
          + " idem.console.allowed-hosts)").write(response);
      return;
    }
    String query = request.getQueryString();
    if (query != null && query.length() > MAX_QUERY) {
      HttpBodies.discardOrClose(request, response, MAX_BODY);
      Problem.of(ConsoleProblems.URI_TOO_LONG).withDetail("the query string is longer than " + MAX_QUERY
          + " characters").write(response);
      return;
    }
    String path = request.getPathInfo();
    if (path == null) {
      HttpBodies.discardOrClose(request, response, MAX_BODY);
      response.setStatus(HttpServletResponse.SC_FOUND);
      response.setHeader("Location", request.getContextPath() + request.getServletPath() + "/");
      return;
    }
    if (path.equals("/api") || path.startsWith("/api/")) {
      api(path.substring(4), request, response);
      return;
    }
    assets.serve(path.substring(1), request, response);
  }

  private void api(String path, HttpServletRequest request, HttpServletResponse response) throws IOException {
    String method = request.getMethod();
    boolean action = !method.equals("GET") && !method.equals("HEAD");
    String crossSite = crossSite(request);
    if (crossSite != null) {
      HttpBodies.discardOrClose(request, response, MAX_BODY);
      Problem.of(ConsoleProblems.CROSS_SITE).withDetail(crossSite).write(response);
      return;
    }
    if (action && !"1".equals(request.getHeader(ACTION_HEADER))) {
      HttpBodies.discardOrClose(request, response, MAX_BODY);
      Problem.of(ConsoleProblems.ACTION_HEADER).withDetail("the console's actions carry " + ACTION_HEADER
          + ": 1, which its page sends and other sites' pages cannot").write(response);
      return;
    }
    ConsoleAuthorizer.Decision decision = authorizer.authorize(request);
    if (decision == null || !decision.allowed()) {
      HttpBodies.discardOrClose(request, response, MAX_BODY);
      refuse(decision, response);
      return;
    }
    String operator = decision.operator();
    String allow = allow(path);
    if (allow == null) {
      HttpBodies.discardOrClose(request, response, MAX_BODY);
      Problem.of(ConsoleProblems.ROUTE_NOT_FOUND).withDetail("the console has no route api" + path)
          .write(response);
      return;
    }
    List<String> methods = List.of(allow.split(" "));
    if (!methods.contains(method) && !(methods.contains("GET") && method.equals("HEAD"))) {
      HttpBodies.discardOrClose(request, response, MAX_BODY);
      String allowed = String.join(", ", methods).replace("GET", "GET, HEAD");
      response.setHeader("Allow", allowed);
      Problem.of(ConsoleProblems.METHOD).withDetail("api" + path + " answers " + allowed + " only")
          .write(response);
      return;
    }
    String auditAction = action ? auditAction(path) : null;
    String target = null;
    Instant now = clock.instant();
    try {
      // every route's body is bounded, not only the one that reads it: a request over the limit changes nothing
      byte[] body = HttpBodies.readAtMost(request, MAX_BODY);
      if (body == null) {
        // read the rest (bounded) so that the caller gets the answer; a larger body closes the connection
        HttpBodies.discardOrClose(request, response, HttpBodies.MAX_DISCARDED_BYTES);
        target = action ? safeTarget(path, request) : null;
        throw new ConsoleProblems.Refusal(Problem.of(ProblemCode.REQUEST_TOO_LARGE)
            .withDetail("the body is larger than " + MAX_BODY + " bytes"));
      }
      if (action) {
        target = auditTarget(path, request);
      }
      Map<String, Object> answer = route(path, request, body, operator, now);
      if (action) {
        audit(new ConsoleAction(clock.instant(), operator, auditAction, target, "done", detail(path, answer)));
      }
      write(response, answer);
    } catch (ConsoleProblems.Refusal e) {
      if (action) {
        audit(new ConsoleAction(clock.instant(), operator, auditAction, target == null ? "?" : target,
            e.problem().code(), ""));
      }
      e.problem().write(response);
    } catch (StoreException e) {
      LOG.log(System.Logger.Level.WARNING, "console: the store failed on " + method + " api" + path, e);
      if (action) {
        audit(new ConsoleAction(clock.instant(), operator, auditAction, target == null ? "?" : target,
            ProblemCode.DEPENDENCY_UNAVAILABLE.code(), ""));
      }
      Problem.of(ProblemCode.DEPENDENCY_UNAVAILABLE).withTitle("Store unavailable")
          .withDetail("the store failed; try again").write(response);
    } catch (RuntimeException e) {
      // anything else is the console's or a dependency's fault: answered and audited here, never left to the
      // container (which would answer its own page and keep no trace of the action)
      LOG.log(System.Logger.Level.ERROR, "console: " + method + " api" + path + " failed: "
          + e.getClass().getName(), e);
      ProblemCode problem = e instanceof DecryptionException ? ProblemCode.RECORD_UNREADABLE
          : ConsoleProblems.INTERNAL;
      if (action) {
        audit(new ConsoleAction(clock.instant(), operator, auditAction, target == null ? "?" : target,
            problem.code(), e.getClass().getSimpleName()));
      }
      if (response.isCommitted()) {
        return;
      }
      response.resetBuffer();
      Problem.of(problem).withDetail("the console failed to answer (" + e.getClass().getSimpleName()
          + "); the server's log says more").write(response);
    }
  }

  private Map<String, Object> route(String path, HttpServletRequest request, byte[] body, String operator,
      Instant now) {
    switch (path) {
      case "/session":
        return Json.document("operator", operator, "store", records.storeName(), "outbox", outbox != null,
            "metrics", metrics != null);
      case "/records":
        return request.getMethod().equals("DELETE") ? records.evict(request, now) : records.list(request, now);
      case "/records/resolve":
        return records.resolve(request, body, operator + " (console)", now);
      case "/records/history":
        return records.history(request);
      case "/metrics":
        Map<String, Object> summary = Json.document("at", now.toEpochMilli());
        summary.putAll(metrics.summary(now));
        return summary;
      default:
        return OutboxApi.handle(outbox, path.substring("/outbox".length()), request);
    }
  }

  /** The method of the route, or null when there is none (or its view is not configured). */
  private String allow(String path) {
    switch (path) {
      case "/session", "/records/history":
        return "GET";
      case "/records":
        return "GET DELETE";
      case "/records/resolve":
        return "POST";
      case "/metrics":
        return metrics == null ? null : "GET";
      default:
        if (outbox != null && (path.equals("/outbox") || path.startsWith("/outbox/"))) {
          return OutboxApi.method(path.substring("/outbox".length()));
        }
        return null;
    }
  }

  private static String auditAction(String path) {
    if (path.equals("/records")) {
      return "record.evict";
    }
    if (path.equals("/records/resolve")) {
      return "record.resolve";
    }
    return OutboxApi.action(path.substring("/outbox".length()));
  }

  private static String auditTarget(String path, HttpServletRequest request) {
    if (path.startsWith("/records")) {
      String scope = request.getParameter("scope");
      String operation = request.getParameter("operation");
      String key = request.getParameter("key");
      try {
        return RecordRoutes.target(RecordKey.of(scope, operation, key));
      } catch (RuntimeException e) {
        return "(an invalid record key)";
      }
    }
    String target = OutboxApi.target(path.substring("/outbox".length()), request);
    return target.length() > 300 ? target.substring(0, 300) + "…" : target;
  }

  /** The audit's target, or {@code ?} when the request cannot name one. */
  private static String safeTarget(String path, HttpServletRequest request) {
    try {
      return auditTarget(path, request);
    } catch (RuntimeException e) {
      return "?";
    }
  }

  private static String detail(String path, Map<String, Object> answer) {
    if (path.equals("/records/resolve")) {
      return answer.get("action") + " from " + answer.get("from") + " to " + answer.get("to") + ": "
          + answer.get("reason");
    }
    if (path.equals("/records")) {
      return "was " + answer.get("state") + " at version " + answer.get("version")
          + (Boolean.TRUE.equals(answer.get("forced")) ? ", forced" : "");
    }
    if (answer.containsKey("replayed")) {
      return answer.get("replayed") + " events";
    }
    return "now " + answer.get("status");
  }

  private void audit(ConsoleAction action) {
    try {
      audit.record(action);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.ERROR, "console: the audit failed to keep " + action, e);
    }
  }

  private void refuse(ConsoleAuthorizer.Decision decision, HttpServletResponse response) throws IOException {
    if (decision == null) {
      LOG.log(System.Logger.Level.ERROR, "console: the authorizer " + authorizer + " answered null; refused");
      Problem.of(ConsoleProblems.FORBIDDEN).withDetail("the console's authorizer gave no decision").write(response);
    } else if (decision.status() == 401) {
      response.setHeader("WWW-Authenticate", "Bearer realm=\"idem-console\"");
      Problem.of(ProblemCode.UNAUTHENTICATED).withDetail(decision.detail()).write(response);
    } else if (authorizer instanceof RefuseAll) {
      Problem.of(ConsoleProblems.NOT_CONFIGURED).withDetail(decision.detail()).write(response);
    } else {
      Problem.of(ConsoleProblems.FORBIDDEN).withDetail(decision.detail()).write(response);
    }
  }

  /** Why the request looks sent by another site's page, or null. */
  private String crossSite(HttpServletRequest request) {
    String site = request.getHeader("Sec-Fetch-Site");
    if (site != null && !site.equals("same-origin") && !site.equals("none")) {
      return "the browser sent this request for a page of another site (Sec-Fetch-Site: "
          + (site.length() > 20 ? "?" : site) + "); the console answers its own page only";
    }
    String origin = request.getHeader("Origin");
    if (origin == null) {
      return null;
    }
    String hostHeader = request.getHeader("Host");
    try {
      String authority = URI.create(origin).getRawAuthority();
      if (authority != null && hostHeader != null && authority.equalsIgnoreCase(hostHeader.strip())) {
        return null;
      }
    } catch (IllegalArgumentException e) {
      // refused below, unless a trusted origin
    }
    // the page's public origin behind a proxy that rewrites Host or terminates TLS: configured, or the request's
    // own scheme, name and port where the application applies a trusted proxy's forwarded headers; this servlet
    // never reads them itself, since a page that rebinds its own name to this address can send them too
    String normal = origin(origin);
    if (normal != null && (trustedOrigins.contains(normal) || normal.equals(ownOrigin(request)))) {
      return null;
    }
    return "the request comes from a page of another origin; the console answers its own page only (behind a"
        + " proxy that rewrites Host, add the page's origin to the console's trusted origins)";
  }

  /**
   * The request's origin from its scheme, server name and port: the {@code Host} header's unless a filter the
   * application installed (Spring's {@code ForwardedHeaderFilter}) or its container applied a trusted proxy's
   * forwarded headers; null when it is not an http or https origin.
   */
  private static String ownOrigin(HttpServletRequest request) {
    String host = request.getServerName();
    if (host == null || host.isEmpty()) {
      return null;
    }
    if (host.indexOf(':') >= 0 && !host.startsWith("[")) {
      host = "[" + host + "]";
    }
    return origin(request.getScheme() + "://" + host + ":" + request.getServerPort());
  }

  /**
   * An origin as {@code scheme://host[:port]}: scheme and host in lower case, the scheme's default port left out;
   * null for anything but an absolute http or https URI with a host and nothing after its port.
   */
  static String origin(String text) {
    if (text == null || text.length() > 300) {
      return null;
    }
    URI uri;
    try {
      uri = new URI(text.strip());
    } catch (URISyntaxException e) {
      return null;
    }
    String scheme = uri.getScheme() == null ? null : uri.getScheme().toLowerCase(Locale.ROOT);
    if (!"http".equals(scheme) && !"https".equals(scheme) || uri.isOpaque() || uri.getHost() == null
        || uri.getRawUserInfo() != null || !uri.getRawPath().isEmpty() || uri.getRawQuery() != null
        || uri.getRawFragment() != null) {
      return null;
    }
    int port = uri.getPort();
    boolean defaultPort = port == -1 || port == (scheme.equals("http") ? 80 : 443);
    return scheme + "://" + uri.getHost().toLowerCase(Locale.ROOT) + (defaultPort ? "" : ":" + port);
  }

  /** The host of a {@code Host} header, lower case, without its port; an IPv6 address in brackets. */
  static String requestedHost(String header) {
    if (header == null) {
      return "";
    }
    String h = header.strip().toLowerCase(Locale.ROOT);
    if (h.startsWith("[")) {
      int end = h.indexOf(']');
      return end > 0 ? h.substring(0, end + 1) : h;
    }
    int colon = h.indexOf(':');
    if (colon < 0) {
      return h;
    }
    return colon == h.lastIndexOf(':') ? h.substring(0, colon) : "[" + h + "]";
  }

  private static void secure(HttpServletResponse response) {
    response.setHeader("Cache-Control", "no-store");
    response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    response.setHeader("X-Content-Type-Options", "nosniff");
    response.setHeader("X-Frame-Options", "DENY");
    response.setHeader("Referrer-Policy", "no-referrer");
    response.setHeader("Cross-Origin-Opener-Policy", "same-origin");
    response.setHeader("Cross-Origin-Resource-Policy", "same-origin");
  }

  private static void write(HttpServletResponse response, Map<String, Object> document) throws IOException {
    byte[] bytes = Json.write(document);
    response.setStatus(HttpServletResponse.SC_OK);
    response.setContentType("application/json");
    response.setContentLength(bytes.length);
    response.getOutputStream().write(bytes);
  }

  @Override
  public String toString() {
    return "ConsoleServlet{store=" + records.storeName() + ", outbox=" + (outbox != null) + ", authorizer="
        + authorizer + ", hosts=" + allowedHosts + (trustedOrigins.isEmpty() ? "" : ", origins=" + trustedOrigins)
        + '}';
  }

  /** Configures a {@link ConsoleServlet}; every setting is checked here, before the console answers anything. */
  public static final class Builder {
    private final Idem idem;
    private Object outbox;
    private RecordSearch search;
    private RecordHints hints = RecordHints.none();
    private ConsoleAuthorizer authorizer = ConsoleAuthorizer.refuseAll();
    private ConsoleAudit audit = ConsoleAudit.logging();
    private ConsoleMetrics metrics;
    private Clock clock = Clock.systemUTC();
    private Set<String> allowedHosts = new LinkedHashSet<>(LOOPBACK_HOSTS);
    private Set<String> trustedOrigins = new LinkedHashSet<>();

    private Builder(Idem idem) {
      this.idem = Objects.requireNonNull(idem, "idem");
    }

    /**
     * Adds the outbox views and actions (idem-outbox on the class path).
     *
     * @param relay the relay to wake after a replay, and whose state the counts show; may be null
     */
    public Builder outbox(Outbox outbox, OutboxRelay relay) {
      return outbox(outbox, () -> relay);
    }

    /**
     * Adds the outbox views and actions, with the relay of the moment (for a relay that is rebuilt when the
     * application restarts it).
     *
     * @param relay answers the running relay, or null when none runs
     */
    public Builder outbox(Outbox outbox, Supplier<OutboxRelay> relay) {
      this.outbox = new OutboxRoutes(Objects.requireNonNull(outbox, "outbox"), Objects.requireNonNull(relay,
          "relay"));
      return this;
    }

    /**
     * How the search box finds records by a part of their key. Default: {@link RecordSearch#scanning} over the
     * store's admin, looking at up to 10,000 records per state; pass {@link JdbcRecordSearch} on a JDBC store.
     */
    public Builder search(RecordSearch search) {
      this.search = Objects.requireNonNull(search, "search");
      return this;
    }

    /** What the application adds to a record to help an operator decide it. Default: {@link RecordHints#none()}. */
    public Builder hints(RecordHints hints) {
      this.hints = Objects.requireNonNull(hints, "hints");
      return this;
    }

    /** Who may use the console. Default: {@link ConsoleAuthorizer#refuseAll()}. */
    public Builder authorizer(ConsoleAuthorizer authorizer) {
      this.authorizer = Objects.requireNonNull(authorizer, "authorizer");
      return this;
    }

    /** Where every action goes. Default: {@link ConsoleAudit#logging()}. */
    public Builder audit(ConsoleAudit audit) {
      this.audit = Objects.requireNonNull(audit, "audit");
      return this;
    }

    /** The charts' numbers; without them the console has no charts. */
    public Builder metrics(ConsoleMetrics metrics) {
      this.metrics = Objects.requireNonNull(metrics, "metrics");
      return this;
    }

    /** The clock of lease ages and resolution times. Default: the system's, in UTC. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * The host names (as the {@code Host} header carries them, without the port) the console answers for; others
     * get 403, which defeats DNS rebinding. Default: {@link #LOOPBACK_HOSTS}. {@code *} allows any, for a console
     * behind a proxy that checks the host itself. IPv6 addresses go in brackets ({@code [::1]}).
     *
     * @throws IllegalArgumentException for an empty list or a name with a port, a space, a slash or a wildcard other
     *     than a lone {@code *}
     */
    public Builder allowedHosts(Collection<String> hosts) {
      Objects.requireNonNull(hosts, "hosts");
      if (hosts.isEmpty()) {
        throw new IllegalArgumentException("the console's allowed hosts must not be empty (use \"*\" for any)");
      }
      Set<String> checked = new LinkedHashSet<>();
      for (String h : hosts) {
        if (h == null || h.isBlank()) {
          throw new IllegalArgumentException("an allowed host must not be blank");
        }
        String name = h.strip().toLowerCase(Locale.ROOT);
        boolean ipv6 = name.startsWith("[") && name.endsWith("]") && name.length() > 2;
        if (!name.equals("*") && !ipv6 && !name.matches("[a-z0-9._-]{1,253}")) {
          throw new IllegalArgumentException("an allowed host is a host name, an IPv4 address, a bracketed IPv6"
              + " address or *, without a port, got '" + h + "'");
        }
        checked.add(name);
      }
      this.allowedHosts = checked;
      return this;
    }

    /**
     * The public origins of the console's page ({@code https://ops.example.com}, {@code http://10.0.0.5:8080}) whose
     * requests the API accepts besides the request's own origin (the one its {@code Host} header names): for a
     * console behind a reverse proxy that rewrites {@code Host} or terminates TLS, where the browser's {@code Origin}
     * is not the origin the request reaches the servlet with. {@code X-Forwarded-*} and {@code Forwarded} headers are
     * never read for this, since a page that rebinds its own name to this address can send them too (with Spring's
     * {@code ForwardedHeaderFilter} or a container that applies them, the request already carries the public
     * origin). The request's {@code Host} must still be an {@link #allowedHosts allowed host}. Default: none.
     *
     * @throws IllegalArgumentException for an origin that is not an absolute {@code http} or {@code https} URI with a
     *     host and nothing after its port (no path, not even {@code /}, no query, fragment or user information), or
     *     {@code *}
     */
    public Builder trustedOrigins(Collection<String> origins) {
      Objects.requireNonNull(origins, "origins");
      Set<String> checked = new LinkedHashSet<>();
      for (String o : origins) {
        String origin = origin(o);
        if (origin == null) {
          throw new IllegalArgumentException("a trusted origin is an absolute http or https origin such as"
              + " https://ops.example.com or http://10.0.0.5:8080, without a path, got '" + o + "'");
        }
        checked.add(origin);
      }
      this.trustedOrigins = checked;
      return this;
    }

    /** The console. */
    public ConsoleServlet build() {
      return new ConsoleServlet(this);
    }
  }
}
