package dev.idem.spring.tracing;

import dev.idem.servlet.budget.RetryBudgetFilter;
import dev.idem.core.protocol.IdemHeaders;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * Hands the request's {@code Idempotency-Attempt} header (a number from 1 to 1000, surrounding whitespace ignored;
 * anything else is ignored, as by the MDC filter) to an {@link OpenTelemetryListener} for the time of the request, so
 * that the listener can set {@code idem.attempt} on the span. Must run before the idempotency filter;
 * {@link IdemTracingAutoConfiguration} registers it just before. Thread-safe.
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
    OptionalInt n = request instanceof HttpServletRequest http ? IdemHeaders.attempt(http.getHeader(ATTEMPT_HEADER))
        : OptionalInt.empty();
    if (n.isEmpty()) {
      chain.doFilter(request, response);
      return;
    }
    Long previous = listener.attempt((long) n.getAsInt());
    try {
      chain.doFilter(request, response);
    } finally {
      listener.attempt(previous);
    }
  }
}
