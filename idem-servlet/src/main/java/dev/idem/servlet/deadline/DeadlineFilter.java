package dev.idem.servlet.deadline;

import dev.idem.core.Deadline;
import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.HttpBodies;
import dev.idem.servlet.Problem;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.regex.Pattern;

/**
 * Turns the time a client has left into a {@link Deadline} for the handler (docs/deadlines.md). The client sends it
 * as {@value #DEFAULT_HEADER}{@code : <milliseconds>} (idem-client does on every attempt that has a deadline).
 *
 * <ul>
 *   <li>A request whose budget is below {@link Builder#minRemaining(Duration) minRemaining} (default 1 ms, so
 *       {@code Request-Timeout: 0}) has no one waiting for its answer: it is refused at once, before any later filter
 *       or the handler runs, with 503 problem {@code DEPENDENCY.timeout}, {@code "retryable": true} (a retry with a new
 *       budget may succeed). Put this filter before the idempotency filter, so that such a request creates no record.
 *   <li>Otherwise the deadline is the smaller of the client's budget and the server's {@link Builder#max(Duration)
 *       max}, if one is set; a request without the header gets {@code max} as its deadline, or none when no max is
 *       set. It is available as the request attribute {@value #ATTRIBUTE} ({@link #deadline(ServletRequest)}) and,
 *       on the request thread while the rest of the chain runs, as {@link Deadline#current()}, so that calls made
 *       through idem-client inherit it.
 *   <li>The header is parsed strictly and cheaply: 1 to {@value #MAX_HEADER_LENGTH} ASCII digits, values above one
 *       hour are taken as one hour; anything else (a sign, a fraction, units, a comma-separated list) is treated as
 *       absent, never as an error.
 * </ul>
 *
 * <p>Asynchronous requests: {@link Deadline#current()} is set on the thread that runs {@code chain.doFilter} only;
 * work that continues on other threads reads {@link #deadline(ServletRequest)} and
 * {@linkplain Deadline#enter() enters} it itself. Thread-safe once built.
 */
public final class DeadlineFilter implements Filter {
  /** The header idem-client sends: the milliseconds it will still wait for the answer. */
  public static final String DEFAULT_HEADER = IdemHeaders.REQUEST_TIMEOUT;
  /** The request attribute that holds the request's {@link Deadline}. */
  public static final String ATTRIBUTE = "dev.idem.servlet.deadline.Deadline";
  /** The problem code of a request refused because its deadline passed before it arrived. */
  public static final String TIMEOUT_CODE = ProblemCode.DEPENDENCY_TIMEOUT.code();
  /** The longest header value read; longer values are treated as absent. */
  public static final int MAX_HEADER_LENGTH = 10;
  /** The largest budget taken from the header; larger values are capped to it. */
  public static final Duration MAX_HEADER_BUDGET = Duration.ofHours(1);

  /** The most of a refused request's body read to keep its connection open. */
  private static final int MAX_DISCARDED_BYTES = 64 * 1024;
  private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}");

  private final String header;
  private final Duration max;
  private final Duration minRemaining;
  private final LongSupplier nanos;

  private DeadlineFilter(Builder b) {
    this.header = b.header;
    this.max = b.max;
    this.minRemaining = b.minRemaining;
    this.nanos = b.nanos;
  }

  /** A builder with the defaults: header {@value #DEFAULT_HEADER}, no max, minimum remaining 1 ms. */
  public static Builder builder() {
    return new Builder();
  }

  /** A filter with the defaults of {@link #builder()}. */
  public static DeadlineFilter ofDefaults() {
    return builder().build();
  }

  /** The deadline this filter gave {@code request}, if it gave one. */
  public static Optional<Deadline> deadline(ServletRequest request) {
    Objects.requireNonNull(request, "request");
    return request.getAttribute(ATTRIBUTE) instanceof Deadline d ? Optional.of(d) : Optional.empty();
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (!(request instanceof HttpServletRequest http) || !(response instanceof HttpServletResponse out)) {
      chain.doFilter(request, response);
      return;
    }
    long start = nanos.getAsLong();
    long budgetMillis = parse(http);
    Duration budget;
    if (budgetMillis >= 0) {
      budget = Duration.ofMillis(budgetMillis);
      if (budget.compareTo(minRemaining) < 0) {
        refuse(http, out, budgetMillis);
        return;
      }
      if (max != null && max.compareTo(budget) < 0) {
        budget = max;
      }
    } else if (max != null) {
      budget = max;
    } else {
      chain.doFilter(request, response);
      return;
    }
    Deadline deadline = Deadline.after(budget.minusNanos(nanos.getAsLong() - start), nanos);
    request.setAttribute(ATTRIBUTE, deadline);
    try (Deadline.Binding binding = deadline.enter()) {
      chain.doFilter(request, response);
    }
  }

  /** The header's milliseconds, capped at one hour, or -1 when the header is absent or malformed. */
  long parse(HttpServletRequest request) {
    String value = request.getHeader(header);
    if (value == null) {
      return -1;
    }
    int from = 0;
    int to = value.length();
    while (from < to && (value.charAt(from) == ' ' || value.charAt(from) == '\t')) {
      from++;
    }
    while (to > from && (value.charAt(to - 1) == ' ' || value.charAt(to - 1) == '\t')) {
      to--;
    }
    if (to == from || to - from > MAX_HEADER_LENGTH) {
      return -1;
    }
    long millis = 0;
    for (int i = from; i < to; i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      millis = millis * 10 + (c - '0'); // at most 10 digits: no overflow
    }
    return Math.min(millis, MAX_HEADER_BUDGET.toMillis());
  }

  private void refuse(HttpServletRequest request, HttpServletResponse response, long budgetMillis) throws IOException {
    if (response.isCommitted()) {
      return;
    }
    HttpBodies.discardOrClose(request, response, MAX_DISCARDED_BYTES);
    Problem.of(ProblemCode.DEPENDENCY_TIMEOUT)
        .withDetail("the request arrived with " + header + ": " + budgetMillis + " ms, less than the "
            + minRemaining.toMillis() + " ms this server needs to start; no work was started")
        .write(response);
  }

  @Override
  public String toString() {
    return "DeadlineFilter[header=" + header + ", max=" + max + ", minRemaining=" + minRemaining + "]";
  }

  /** Mutable, not thread-safe; setters validate at once. */
  public static final class Builder {
    private String header = DEFAULT_HEADER;
    private Duration max;
    private Duration minRemaining = Duration.ofMillis(1);
    private LongSupplier nanos = Deadline.SYSTEM_NANOS;

    private Builder() {}

    /** The request header that carries the client's milliseconds. Default {@value #DEFAULT_HEADER}. */
    public Builder header(String header) {
      Objects.requireNonNull(header, "header");
      if (!HEADER_NAME.matcher(header).matches()) {
        throw new IllegalArgumentException("header must be an HTTP field name (1 to 64 token characters), was '"
            + header + "'");
      }
      this.header = header;
      return this;
    }

    /**
     * The longest deadline this server grants a request: it caps the client's budget, and is the deadline of a
     * request that sends none. {@code null} (the default) means no cap and no deadline without the header. At
     * least 1 ms and at most one hour.
     */
    public Builder max(Duration max) {
      if (max != null && (max.toMillis() < 1 || max.compareTo(MAX_HEADER_BUDGET) > 0)) {
        throw new IllegalArgumentException("max must be 1 ms to 1 hour (or null for none), was " + max);
      }
      this.max = max;
      return this;
    }

    /**
     * A request arriving with less than this is refused with 503 {@code DEPENDENCY.timeout}. Default 1 ms (only
     * {@code Request-Timeout: 0} is refused); raise it to the least time a request needs to be worth starting. 0 to
     * 1 hour.
     */
    public Builder minRemaining(Duration minRemaining) {
      Objects.requireNonNull(minRemaining, "minRemaining");
      if (minRemaining.isNegative() || minRemaining.compareTo(MAX_HEADER_BUDGET) > 0) {
        throw new IllegalArgumentException("minRemaining must be 0 to 1 hour, was " + minRemaining);
      }
      this.minRemaining = minRemaining;
      return this;
    }

    /** The nano source deadlines read. Default {@link Deadline#SYSTEM_NANOS}; tests inject a fake one. */
    public Builder nanoSource(LongSupplier nanos) {
      this.nanos = Objects.requireNonNull(nanos, "nanoSource");
      return this;
    }

    /**
     * The filter, immutable.
     *
     * @throws IllegalArgumentException when {@code max} is below {@code minRemaining}
     */
    public DeadlineFilter build() {
      if (max != null && max.compareTo(minRemaining) < 0) {
        throw new IllegalArgumentException("max (" + max + ") must not be below minRemaining (" + minRemaining
            + "): every request without the header would get a deadline too short to serve");
      }
      return new DeadlineFilter(this);
    }
  }
}
