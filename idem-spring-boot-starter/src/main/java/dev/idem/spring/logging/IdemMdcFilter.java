package dev.idem.spring.logging;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.InvalidKeyException;
import dev.idem.spring.internal.AttemptHeader;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
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
 *   <li>{@code error_code}: on unsafe requests (POST, PUT, PATCH, DELETE...), as soon as the answer turns out to be
 *       an RFC 9457 problem ({@code application/problem+json}), its {@code code}: the idempotency filter's
 *       ({@code CONFLICT.idempotency.payload_mismatch}, {@code VALIDATION.idempotency_key_missing}...) or the
 *       application's. Such an answer is also logged once when the request ends (logger
 *       {@code dev.idem.spring.logging.IdemMdcFilter}: 5xx at INFO, others at DEBUG) with the method, the path and
 *       the status.
 * </ul>
 *
 * <p>Nothing else is read from the request or the response: no other header (so no {@code Authorization}), no
 * query string and no body. To find the problem code the response of an unsafe request is wrapped, and only the
 * first {@value #PROBLEM_PREFIX_BYTES} bytes of a problem document written to its output stream (as Idem's
 * {@code Problem} writes it) are looked at, never kept. Register it before
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
  public static final String ATTEMPT_HEADER = AttemptHeader.NAME;
  /** The header of the key. */
  public static final String KEY_HEADER = "Idempotency-Key";
  /** The largest attempt number put into the MDC; larger (or malformed) values are left out. */
  public static final int MAX_ATTEMPT = AttemptHeader.MAX;
  /** How much of a problem document is looked at for its code. */
  public static final int PROBLEM_PREFIX_BYTES = 1024;

  private static final Logger LOG = LoggerFactory.getLogger(IdemMdcFilter.class);
  private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");
  private static final String PROBLEM_TYPE = "application/problem+json";
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

  /** The attempt when the header is a number from 1 to {@value #MAX_ATTEMPT} ({@link AttemptHeader}); else null. */
  static String attempt(String header) {
    OptionalInt attempt = AttemptHeader.parse(header);
    return attempt.isPresent() ? Integer.toString(attempt.getAsInt()) : null;
  }

  /** The request's path within the server, without the query string (which may carry anything). */
  private static String path(HttpServletRequest request) {
    return key(request.getRequestURI());
  }

  /**
   * The code of a problem document from its first bytes: the {@code code} member, or the code in a
   * {@code urn:idem:problem:<code>} type (which comes first in Idem's problems). Only a plain code
   * ({@code [A-Za-z0-9_.-]}, at most 100 characters) is taken; anything else is no code.
   */
  static String code(byte[] prefix, int length) {
    String text = new String(prefix, 0, length, StandardCharsets.ISO_8859_1);
    String code = member(text, "\"code\":\"");
    return code != null ? code : member(text, "\"type\":\"urn:idem:problem:");
  }

  private static String member(String text, String opening) {
    int at = text.indexOf(opening);
    if (at < 0) {
      return null;
    }
    int start = at + opening.length();
    int end = start;
    while (end < text.length() && end - start <= MAX_CODE_LENGTH) {
      char c = text.charAt(end);
      if (c == '"') {
        return end > start ? text.substring(start, end) : null;
      }
      if (!(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.'
          || c == '-')) {
        return null;
      }
      end++;
    }
    return null;
  }

  /** Watches the answer for a problem document and reads its code from the first bytes written. */
  private static final class ProblemCodeResponse extends HttpServletResponseWrapper {
    private final IdemMdc.Frame frame;
    private final byte[] prefix = new byte[PROBLEM_PREFIX_BYTES];
    private int captured;
    private boolean decided;
    private String code;
    private Stream stream;

    ProblemCodeResponse(HttpServletResponse response, IdemMdc.Frame frame) {
      super(response);
      this.frame = frame;
    }

    String code() {
      return code;
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
      ServletOutputStream out = super.getOutputStream();
      if (stream == null || stream.out != out) {
        stream = new Stream(out);
      }
      return stream;
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
      captured = 0;
      decided = false;
      code = null;
      frame.put(IdemMdc.ERROR_CODE, null);
    }

    private boolean watching() {
      if (decided) {
        return false;
      }
      if (captured == 0) {
        String type = getContentType();
        if (type == null || !type.toLowerCase(Locale.ROOT).startsWith(PROBLEM_TYPE)) {
          decided = true;
          return false;
        }
      }
      return true;
    }

    private void seen(byte[] b, int off, int len) {
      int n = Math.min(len, prefix.length - captured);
      System.arraycopy(b, off, prefix, captured, n);
      captured += n;
      String found = IdemMdcFilter.code(prefix, captured);
      if (found != null || captured == prefix.length) {
        decided = true;
        code = found;
        if (found != null) {
          frame.put(IdemMdc.ERROR_CODE, found);
        }
      }
    }

    /** The container's stream, with the first bytes of a problem looked at on their way. */
    private final class Stream extends ServletOutputStream {
      final ServletOutputStream out;

      Stream(ServletOutputStream out) {
        this.out = out;
      }

      @Override
      public void write(int b) throws IOException {
        if (watching()) {
          seen(new byte[] {(byte) b}, 0, 1);
        }
        out.write(b);
      }

      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        if (len > 0 && watching()) {
          seen(b, off, len);
        }
        out.write(b, off, len);
      }

      @Override
      public void flush() throws IOException {
        out.flush();
      }

      @Override
      public void close() throws IOException {
        out.close();
      }

      @Override
      public boolean isReady() {
        return out.isReady();
      }

      @Override
      public void setWriteListener(WriteListener listener) {
        out.setWriteListener(listener);
      }
    }
  }
}
