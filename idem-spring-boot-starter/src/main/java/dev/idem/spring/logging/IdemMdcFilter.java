package dev.idem.spring.logging;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.InvalidKeyException;
import dev.idem.core.protocol.IdemHeaders;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.Problem;
import dev.idem.servlet.ProblemListener;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.util.OptionalInt;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts the request's idempotency context into the SLF4J MDC while the rest of the chain runs, so that every line
 * logged on the request's thread (the application's own included) carries it, and restores the MDC afterwards:
 *
 * <ul>
 *   <li>{@code idempotency_key}: the {@code Idempotency-Key} header as sent, at most
 *       {@value IdempotencyKey#MAX_LENGTH} characters, anything but visible ASCII replaced by {@code ?} (so that a
 *       hostile key cannot forge log lines);
 *   <li>{@code attempt}: the {@code Idempotency-Attempt} header when it is a number from 1 to {@value #MAX_ATTEMPT}
 *       (surrounding whitespace ignored), else nothing;
 *   <li>{@code error_code}: on unsafe requests (POST, PUT, PATCH, DELETE...), as soon as a problem is written as the
 *       answer with Idem's {@link Problem#write} (which tells the response chain, {@link ProblemListener}), or kept
 *       or replayed by the idempotency filter, its {@code code}: the idempotency filter's
 *       ({@code CONFLICT.idempotency.payload_mismatch}, {@code VALIDATION.idempotency_key_missing}...) or the
 *       application's. Such an answer is also logged once when the request ends (logger
 *       {@code dev.idem.spring.logging.IdemMdcFilter}: 5xx at INFO, others at DEBUG) with the method, the path and
 *       the status.
 * </ul>
 *
 * <p>Nothing else is read from the request or the response: no other header (so no {@code Authorization}), no
 * query string and no body: the response of an unsafe request is wrapped to be told the problem code, and its
 * bytes are never read. A problem document written some other way (not through {@code Problem.write}) has no code
 * here unless its writer calls {@link Problem#announce}. Register it before
 * authentication and before the idempotency filter (the starter does: {@code idem.logging.mdc.order}). Requests
 * without either header and with a safe method pass untouched. Thread-safe.
 *
 * <p>The MDC is set on the request's thread while the filter runs, and put back as it was when the filter returns.
 * An asynchronous request (a controller returning a {@code Callable} or a {@code DeferredResult}) has its MDC only
 * while its first dispatch runs: its answer is written later, during an async dispatch on whichever thread the
 * container picks, which this filter (registered for {@code REQUEST} dispatches) does not see, so the answer's
 * {@code error_code} is neither put into the MDC nor logged, and nothing is ever set on that other thread.
 */
public final class IdemMdcFilter implements Filter {
  /** The header idem-client sends with the attempt number. */
  public static final String ATTEMPT_HEADER = IdemHeaders.IDEMPOTENCY_ATTEMPT;
  /** The header of the key. */
  public static final String KEY_HEADER = IdemHeaders.IDEMPOTENCY_KEY;
  /** The largest attempt number put into the MDC; larger (or malformed) values are left out. */
  public static final int MAX_ATTEMPT = IdemHeaders.MAX_ATTEMPT;

  private static final Logger LOG = LoggerFactory.getLogger(IdemMdcFilter.class);
  private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");
  private static final int MAX_CODE_LENGTH = 100;

  /** The filter; it holds no state. */
  public IdemMdcFilter() {}

  /** Sets the MDC of every request. */
  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest) || !(res instanceof HttpServletResponse)) {
      chain.doFilter(req, res);
      return;
    }
    HttpServletRequest request = (HttpServletRequest) req;
    String key = key(request.getHeader(KEY_HEADER));
    String attempt = attempt(request.getHeader(ATTEMPT_HEADER));
    boolean unsafe = !SAFE_METHODS.contains(request.getMethod());
    if (key == null && attempt == null && !unsafe) {
      chain.doFilter(req, res);
      return;
    }
    IdemMdc.Frame frame = IdemMdc.set(IdemMdc.IDEMPOTENCY_KEY, key, IdemMdc.ATTEMPT, attempt,
        IdemMdc.ERROR_CODE, null);
    try {
      if (!unsafe) {
        chain.doFilter(req, res);
        return;
      }
      ProblemCodeResponse response = new ProblemCodeResponse((HttpServletResponse) res, frame);
      chain.doFilter(req, response);
      if (request.isAsyncStarted()) {
        // the answer is written later, on an async dispatch; the frame, closed below, ignores what it finds then
        return;
      }
      String code = response.code();
      if (code != null) {
        int status = response.getStatus();
        if (status >= 500) {
          LOG.info("{} {} answered {} {}", request.getMethod(), path(request), status, code);
        } else if (LOG.isDebugEnabled()) {
          LOG.debug("{} {} answered {} {}", request.getMethod(), path(request), status, code);
        }
      }
    } finally {
      frame.close();
    }
  }

  /**
   * The key as it may be logged: the key the header names when it is valid (so {@code "K7"} and {@code K7} log as
   * one key), otherwise the header with anything but visible ASCII replaced, at most the key's maximum length; null
   * when absent.
   */
  static String key(String header) {
    if (header == null || header.isEmpty()) {
      return null;
    }
    try {
      return IdempotencyKey.fromHeader(header).value();
    } catch (InvalidKeyException e) {
      // logged as sent, made safe below
    }
    int length = Math.min(header.length(), IdempotencyKey.MAX_LENGTH);
    StringBuilder out = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      char c = header.charAt(i);
      out.append(c > 0x20 && c < 0x7f ? c : '?');
    }
    return out.toString();
  }

  /** The attempt when the header is a number from 1 to {@value #MAX_ATTEMPT} ({@link IdemHeaders#attempt}); else null. */
  static String attempt(String header) {
    OptionalInt attempt = IdemHeaders.attempt(header);
    return attempt.isPresent() ? Integer.toString(attempt.getAsInt()) : null;
  }

  /** The request's path within the server, without the query string (which may carry anything). */
  private static String path(HttpServletRequest request) {
    return key(request.getRequestURI());
  }

  /**
   * Told the code of every problem written through it ({@link Problem#write}, or a kept or replayed problem the
   * idempotency filter sends), which it puts into the MDC; a reset forgets it. Reads no bytes.
   */
  private static final class ProblemCodeResponse extends HttpServletResponseWrapper implements ProblemListener {
    private final IdemMdc.Frame frame;
    private String code;

    ProblemCodeResponse(HttpServletResponse response, IdemMdc.Frame frame) {
      super(response);
      this.frame = frame;
    }

    String code() {
      return code;
    }

    @Override
    public void problemWritten(String code) {
      // only a code of ProblemCode's form: one written by other code (a kept answer's) may hold anything
      if (code != null && code.length() <= MAX_CODE_LENGTH && ProblemCode.isWellFormed(code)) {
        this.code = code;
        frame.put(IdemMdc.ERROR_CODE, code);
      }
    }

    @Override
    public void reset() {
      super.reset();
      forget();
    }

    @Override
    public void resetBuffer() {
      super.resetBuffer();
      forget();
    }

    private void forget() {
      code = null;
      frame.put(IdemMdc.ERROR_CODE, null);
    }
  }
}
