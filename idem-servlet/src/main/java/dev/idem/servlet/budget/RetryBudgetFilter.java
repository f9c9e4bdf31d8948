package dev.idem.servlet.budget;

import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.HttpBodies;
import dev.idem.servlet.IdempotencyFilter;
import dev.idem.servlet.Problem;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * A server-side retry budget: limits the share of the requests a service serves that are retries, so that during an
 * incident clients' retries cannot multiply the load on what is failing (docs/architecture.md#retry-budget: retries
 * happen at one layer only, and a server's "do not retry" is obeyed).
 *
 * <p>Each request says which attempt it is in the {@value #DEFAULT_ATTEMPT_HEADER} header (1-based, as
 * {@code IdempotentHttpClient} sends it). Absent, {@code 1} or malformed means a first attempt: it is always served
 * and counted. A value of 2 or more is a retry: it is served if, counting it, retries stay at or below
 * {@code maxRetryShare} of the requests served over the sliding window; otherwise it is refused at once, before
 * anything else in the chain runs, with a 503 problem {@code TRANSIENT.retry_budget_exhausted},
 * {@code "retryable": false} and a {@code Retry-After}. While the window holds fewer than {@code minRequests} served
 * requests nothing is refused, so a quiet service does not refuse its first retries.
 *
 * <p>Refused retries are counted as shed, and neither as retries nor as requests: the share is the share of the
 * work the service does. Counting refusals as requests would let the budget grow with the storm it is meant to damp
 * (every refused retry would make room for another admitted one), and the dependency behind the service would then
 * see more than the configured share of retries.
 *
 * <pre>{@code
 * RetryBudgetFilter budget = RetryBudgetFilter.builder().name("payments")
 *     .maxRetryShare(0.2).window(Duration.ofSeconds(10)).pathPrefixes("/payments")
 *     .build();
 * }</pre>
 *
 * <p>A refused request's body is read and discarded when it is at most 64 KiB, so that the client can reuse the
 * connection; a larger one (declared, or a chunked one that grows past the limit) gets {@code Connection: close}
 * instead. See {@link HttpBodies#discardOrClose}.
 *
 * <p>Register it before any filter that does work (before the {@link IdempotencyFilter}). It acts on
 * {@link DispatcherType#REQUEST} dispatches only. Thread-safe once built and lock-free: a first attempt costs a clock
 * read and one atomic add, a retry one more atomic add and a read of ten buckets.
 */
public final class RetryBudgetFilter implements Filter {
  /** The attempt-counter header that {@code IdempotentHttpClient} sends on every attempt. */
  public static final String DEFAULT_ATTEMPT_HEADER = IdemHeaders.IDEMPOTENCY_ATTEMPT;
  /** The problem code of a refused retry. */
  public static final String PROBLEM_CODE = ProblemCode.RETRY_BUDGET_EXHAUSTED.code();
  /** The default maximum share of served requests that may be retries: 20 %. */
  public static final double DEFAULT_MAX_RETRY_SHARE = 0.2;
  /** The default sliding window: 10 s, in ten buckets of a second. */
  public static final Duration DEFAULT_WINDOW = Duration.ofSeconds(10);
  /** The default number of served requests the window must hold before any retry is refused. */
  public static final int DEFAULT_MIN_REQUESTS = 20;

  private static final System.Logger LOG = System.getLogger(RetryBudgetFilter.class.getName());
  /** A refused request's body up to this size is read and discarded; a larger one closes the connection. */
  private static final int MAX_DRAINED_BYTES = 64 * 1024;

  private final String name;
  private final double maxRetryShare;
  private final Duration window;
  private final int minRequests;
  private final long retryAfterSeconds;
  private final String attemptHeader;
  private final List<String> pathPrefixes;
  private final RetryBudgetListener listener;
  private final RetryShareWindow counts;
  private final Problem refusal;
  private final AtomicBoolean shedding = new AtomicBoolean();
  private final long windowNanos;
  private volatile long lastShed;

  private RetryBudgetFilter(Builder b) {
    this.name = b.name;
    this.maxRetryShare = b.maxRetryShare;
    this.window = b.window;
    this.minRequests = b.minRequests;
    this.attemptHeader = b.attemptHeader;
    this.pathPrefixes = List.copyOf(b.pathPrefixes);
    this.listener = b.listener;
    this.counts = new RetryShareWindow(maxRetryShare, minRequests, window.toNanos(), b.nanoTime);
    this.windowNanos = window.toNanos();
    Duration after = b.retryAfter != null ? b.retryAfter : window;
    this.retryAfterSeconds = Math.max(1, after.toSeconds() + (after.toNanosPart() > 0 ? 1 : 0));
    this.refusal = Problem.of(ProblemCode.RETRY_BUDGET_EXHAUSTED)
        .withDetail("retries take more than " + percent(maxRetryShare) + " of the requests this service served in the"
            + " last " + seconds(window) + "; this retry was refused before any work was done. Do not retry it now."
            + " An earlier attempt may have taken effect: after Retry-After, resend the same request with the same"
            + " Idempotency-Key to learn its outcome; never a new key")
        .with("max_retry_share", maxRetryShare);
  }

  /** A builder with the defaults: 20 % over 10 s, 20 requests before shedding, every path. */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)
        || req.getDispatcherType() != DispatcherType.REQUEST || !applies((HttpServletRequest) req)) {
      chain.doFilter(req, res);
      return;
    }
    int attempt = attempt(((HttpServletRequest) req).getHeader(attemptHeader));
    if (attempt <= 1) {
      counts.firstAttempt();
      chain.doFilter(req, res);
      return;
    }
    if (counts.tryAdmitRetry()) {
      // back to normal only after a whole window without a refusal: at most two log lines per window
      if (shedding.get() && System.nanoTime() - lastShed > windowNanos && shedding.compareAndSet(true, false)) {
        LOG.log(System.Logger.Level.INFO, "Retry budget '" + name + "': retries are back within "
            + percent(maxRetryShare) + " of requests; admitting retries again");
      }
      notify(true, attempt);
      chain.doFilter(req, res);
      return;
    }
    lastShed = System.nanoTime();
    if (!shedding.get() && shedding.compareAndSet(false, true)) {
      LOG.log(System.Logger.Level.WARNING, "Retry budget '" + name + "': retries would exceed "
          + percent(maxRetryShare) + " of the requests served in the last " + seconds(window)
          + "; refusing retries with 503 " + PROBLEM_CODE);
    }
    notify(false, attempt);
    HttpServletResponse response = (HttpServletResponse) res;
    response.setHeader(IdemHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds));
    HttpBodies.discardOrClose((HttpServletRequest) req, response, MAX_DRAINED_BYTES);
    refusal.write(response);
  }

  private void notify(boolean admitted, int attempt) {
    try {
      if (admitted) {
        listener.onRetryAdmitted(name, attempt);
      } else {
        listener.onRetryShed(name, attempt);
      }
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "Retry budget '" + name + "': listener " + listener + " failed", e);
    }
  }

  private boolean applies(HttpServletRequest request) {
    if (pathPrefixes.isEmpty()) {
      return true;
    }
    String path = IdempotencyFilter.pathWithinApplication(request);
    for (String prefix : pathPrefixes) {
      if (prefix.equals("/") || path.equals(prefix)
          || (path.startsWith(prefix) && path.charAt(prefix.length()) == '/')) {
        return true;
      }
    }
    return false;
  }

  /**
   * The attempt number in an attempt-counter header value, read as {@link IdemHeaders#attempt} reads
   * {@code Idempotency-Attempt} (1 to {@value IdemHeaders#MAX_ATTEMPT}, surrounding spaces allowed). Anything else
   * (absent, empty, zero, negative, too large, not a number, a list) is 1, a first attempt: a bad header never causes
   * an error, and never a refusal.
   */
  static int attempt(String value) {
    return IdemHeaders.attempt(value).orElse(1);
  }

  /** The share of requests served over the window that were retries, 0..1; 0 when nothing was served. */
  public double retryShare() {
    return counts.snapshot().retryShare();
  }

  /** Retries admitted since the filter was built (monotonic, for a counter). */
  public long admittedRetries() {
    return counts.admittedTotal();
  }

  /** Retries refused since the filter was built (monotonic, for a counter). */
  public long shedRetries() {
    return counts.shedTotal();
  }

  public String name() {
    return name;
  }

  public double maxRetryShare() {
    return maxRetryShare;
  }

  public Duration window() {
    return window;
  }

  public int minRequests() {
    return minRequests;
  }

  /** The {@code Retry-After} of a refusal, in seconds. */
  public long retryAfterSeconds() {
    return retryAfterSeconds;
  }

  public String attemptHeader() {
    return attemptHeader;
  }

  /** The path prefixes the budget applies to; empty for every path. */
  public List<String> pathPrefixes() {
    return pathPrefixes;
  }

  @Override
  public String toString() {
    return "RetryBudgetFilter[" + name + ", maxRetryShare=" + maxRetryShare + ", window=" + window
        + ", minRequests=" + minRequests + ", paths=" + (pathPrefixes.isEmpty() ? "all" : pathPrefixes) + "]";
  }

  private static String percent(double share) {
    return java.math.BigDecimal.valueOf(share).movePointRight(2).stripTrailingZeros().toPlainString() + " %";
  }

  private static String seconds(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }

  /** Configures a {@link RetryBudgetFilter}. Mutable and not thread-safe; every setter validates at once. */
  public static final class Builder {
    private String name = "idem";
    private double maxRetryShare = DEFAULT_MAX_RETRY_SHARE;
    private Duration window = DEFAULT_WINDOW;
    private int minRequests = DEFAULT_MIN_REQUESTS;
    private Duration retryAfter;
    private String attemptHeader = DEFAULT_ATTEMPT_HEADER;
    private final List<String> pathPrefixes = new ArrayList<>();
    private RetryBudgetListener listener = RetryBudgetListener.none();
    private LongSupplier nanoTime = System::nanoTime;

    private Builder() {}

    /** The name in log lines, listener calls and meter tags; 1 to 64 characters. Default {@code idem}. */
    public Builder name(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank() || name.length() > 64) {
        throw new IllegalArgumentException("retry budget name must be 1 to 64 characters, got '" + name + "'");
      }
      this.name = name;
      return this;
    }

    /**
     * The largest share of served requests that may be retries, 0..1 (0 refuses every retry once the window holds
     * {@code minRequests}; 1 never refuses). Default 0.2.
     */
    public Builder maxRetryShare(double share) {
      if (!(share >= 0.0 && share <= 1.0)) {
        throw new IllegalArgumentException("retry budget maxRetryShare must be between 0 and 1, got " + share);
      }
      this.maxRetryShare = share;
      return this;
    }

    /**
     * The sliding window, kept as ten buckets of a tenth each; 100 ms to 1 hour, a whole number of milliseconds.
     * Default 10 s.
     */
    public Builder window(Duration window) {
      Objects.requireNonNull(window, "window");
      if (window.compareTo(Duration.ofMillis(100)) < 0 || window.compareTo(Duration.ofHours(1)) > 0
          || window.toNanosPart() % 1_000_000 != 0) {
        throw new IllegalArgumentException("retry budget window must be 100 ms to 1 h in whole milliseconds, got "
            + window);
      }
      this.window = window;
      return this;
    }

    /**
     * How many served requests the window must hold before any retry is refused; 0 to refuse from the start.
     * Default 20.
     */
    public Builder minRequests(int minRequests) {
      if (minRequests < 0) {
        throw new IllegalArgumentException("retry budget minRequests must be >= 0, got " + minRequests);
      }
      this.minRequests = minRequests;
      return this;
    }

    /** The {@code Retry-After} of a refusal, rounded up to whole seconds (at least 1). Default: the window. */
    public Builder retryAfter(Duration retryAfter) {
      Objects.requireNonNull(retryAfter, "retryAfter");
      if (retryAfter.isNegative() || retryAfter.isZero() || retryAfter.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException("retry budget retryAfter must be positive and at most 1 day, got "
            + retryAfter);
      }
      this.retryAfter = retryAfter;
      return this;
    }

    /** The attempt-counter header. Default {@value RetryBudgetFilter#DEFAULT_ATTEMPT_HEADER}. */
    public Builder attemptHeader(String header) {
      Objects.requireNonNull(header, "header");
      boolean token = header.chars().allMatch(c -> c > 32 && c < 127 && "()<>@,;:\\\"/[]?={}".indexOf(c) < 0);
      if (header.isEmpty() || !token) {
        throw new IllegalArgumentException("retry budget attemptHeader must be an HTTP header name, got '" + header
            + "'");
      }
      this.attemptHeader = header;
      return this;
    }

    /**
     * Limits the budget to requests whose path within the application is one of these prefixes or lies under one
     * (on a segment boundary: {@code /payments} covers {@code /payments/1}, not {@code /paymentsx}). Requests on
     * other paths are neither counted nor refused. Adds to earlier calls; none means every path.
     */
    public Builder pathPrefixes(String... prefixes) {
      return pathPrefixes(List.of(prefixes));
    }

    /** As {@link #pathPrefixes(String...)}. */
    public Builder pathPrefixes(List<String> prefixes) {
      for (String p : prefixes) {
        Objects.requireNonNull(p, "path prefix");
        if (!p.startsWith("/") || p.contains("*") || p.chars().anyMatch(Character::isWhitespace)) {
          throw new IllegalArgumentException("retry budget path prefix must start with '/' and hold no '*' or"
              + " spaces, got '" + p + "'");
        }
        String normalized = p.length() > 1 && p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
        if (!pathPrefixes.contains(normalized)) {
          pathPrefixes.add(normalized);
        }
      }
      return this;
    }

    public Builder listener(RetryBudgetListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    /**
     * The monotonic nano source that drives the window, as {@link System#nanoTime()} (the default): only differences
     * between its readings count. For tests, a source they step by hand.
     */
    public Builder nanoTime(LongSupplier nanoTime) {
      this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
      return this;
    }

    public RetryBudgetFilter build() {
      return new RetryBudgetFilter(this);
    }
  }
}
