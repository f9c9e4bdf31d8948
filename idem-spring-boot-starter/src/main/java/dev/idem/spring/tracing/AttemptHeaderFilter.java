package dev.idem.spring.tracing;

import dev.idem.servlet.budget.RetryBudgetFilter;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Objects;

/**
 * Hands the request's {@code Idempotency-Attempt} header (a positive number; anything else is ignored) to an
 * {@link OpenTelemetryListener} for the time of the request, so that the listener can set {@code idem.attempt} on the
 * span. Must run before the idempotency filter; {@link IdemTracingAutoConfiguration} registers it just before.
 * Thread-safe.
 */
public final class AttemptHeaderFilter implements Filter {
  /** The header read: the one idem-client sends. */
  public static final String ATTEMPT_HEADER = RetryBudgetFilter.DEFAULT_ATTEMPT_HEADER;

  private final OpenTelemetryListener listener;

  /** A filter that tells {@code listener}. */
  public AttemptHeaderFilter(OpenTelemetryListener listener) {
    this.listener = Objects.requireNonNull(listener, "listener");
  }

  @Override
  public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    Long n = request instanceof HttpServletRequest http ? parse(http.getHeader(ATTEMPT_HEADER)) : null;
    if (n == null) {
      chain.doFilter(request, response);
      return;
    }
    Long previous = listener.attempt(n);
    try {
      chain.doFilter(request, response);
    } finally {
      listener.attempt(previous);
    }
  }

  /** The attempt number, or null when the header is absent or not a number from 1 to 999,999,999. */
  static Long parse(String value) {
    if (value == null) {
      return null;
    }
    String v = value.trim();
    if (v.isEmpty() || v.length() > 9 || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return null;
    }
    long n = Long.parseLong(v);
    return n > 0 ? n : null;
  }
}
