package dev.idem.examples.payments.web;

import static java.nio.charset.StandardCharsets.ISO_8859_1;

import dev.idem.core.protocol.ProblemCode;
import dev.idem.servlet.HttpBodies;
import dev.idem.servlet.Problem;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.springframework.core.Ordered;

/**
 * Reads every request body whole before anything else of the service runs, so that a slow or broken body costs a
 * bounded share of the container's threads and always gets a 4xx problem:
 * <ul>
 *   <li>A body with a {@code Content-Length} that arrives within {@code payments.http.body-grace} of its headers (the
 *       usual small JSON body, sent with them or right after) is taken without waiting on the connection: the
 *       filter reads only what has arrived, and looks again until the grace has passed. On Tomcat,
 *       {@link RefusedBodyValve} lets it look at the connection itself; elsewhere it sees the container's buffer.
 *   <li>Any other body (chunked, larger, slower) needs one of {@code payments.http.max-body-readers} permits while it
 *       is read. With none free
 *       the request gets 503 {@code TRANSIENT.overloaded} with {@code Retry-After}, at once, and the connection is
 *       closed without reading the body: slow bodies hold at most that many threads, and the others stay free for
 *       everyone else.
 *   <li>A body must arrive whole within {@code payments.http.body-timeout} of the request's headers, whatever its
 *       pace: one that trickles in (a byte a second never trips the container's read timeout) or stalls short of its
 *       {@code Content-Length} gets 408 {@code TRANSIENT.request_timeout}.
 *   <li>A body whose chunked framing is broken, or that ends before its {@code Content-Length}, gets 400
 *       {@code VALIDATION.body}; one larger than {@code payments.http.max-body-bytes} gets 413.
 * </ul>
 * A form body that is not percent-encoded UTF-8, or holds a NUL, gets 400 {@code VALIDATION.body} too. Meters:
 * {@code payments.http.body.refused} counts the refusals by {@code code}, and the gauge
 * {@code payments.http.body.readers.free} shows the readers free now. The rest of the chain reads the buffered copy
 * ({@link HttpBodies#withBody}), form parameters included. After a refusal the connection is closed
 * without draining what is left of the body ({@link RefusedBodyValve}, on Tomcat). Thread-safe.
 */
public final class RequestBodyGuard extends HttpFilter {
  /** Right after Spring's character encoding and observation filters, before every other filter of the service. */
  public static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 5;
  /**
   * The request attribute holding the problem this filter answered, for the container's error dispatch when the
   * container had already marked the response as an error (a read that failed inside it).
   */
  static final String PROBLEM = RequestBodyGuard.class.getName() + ".problem";
  /**
   * The request attribute a container may set to a {@link BooleanSupplier} that says, without blocking, whether body
   * bytes have arrived: it may read what the connection holds into the container's buffer ({@link RefusedBodyValve}).
   */
  static final String READABLE = RequestBodyGuard.class.getName() + ".readable";
  private static final String FORM = "application/x-www-form-urlencoded";
  /** How long to wait before looking again for body bytes during the grace. */
  private static final long LOOK_AGAIN_NANOS = 250_000;
  private static final long serialVersionUID = 1L;

  private final transient Semaphore readers;
  private final long timeoutNanos;
  private final long graceNanos;
  private final long maxBytes;
  private final transient MeterRegistry registry;

  /**
   * @param maxReaders the bodies that may be read at once when they are not already in the container's buffer
   * @param timeout how long a body may take to arrive, from the moment its request reaches this filter
   * @param grace how long a body may take to arrive without holding a reader
   * @param maxBytes the largest body taken
   * @param registry where the refusals are counted and the free readers shown
   */
  public RequestBodyGuard(int maxReaders, Duration timeout, Duration grace, long maxBytes, MeterRegistry registry) {
    if (maxReaders < 1 || timeout.isNegative() || timeout.isZero() || grace.isNegative() || maxBytes < 1) {
      throw new IllegalArgumentException("maxReaders, timeout and maxBytes must be positive, grace not negative");
    }
    this.graceNanos = grace.toNanos();
    this.readers = new Semaphore(maxReaders);
    this.timeoutNanos = timeout.toNanos();
    this.maxBytes = maxBytes;
    this.registry = Objects.requireNonNull(registry, "registry");
    Gauge.builder("payments.http.body.readers.free", readers, Semaphore::availablePermits)
        .description("request body readers free now").register(registry);
  }

  @Override
  protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    long length = request.getContentLengthLong();
    if (length <= 0 && request.getHeader("Transfer-Encoding") == null) {
      chain.doFilter(request, response);
      return;
    }
    if (length > maxBytes) {
      answer(request, response, Problem.of(ProblemCode.REQUEST_TOO_LARGE)
          .withDetail("the body's Content-Length exceeds " + maxBytes + " bytes"));
      return;
    }
    long start = System.nanoTime();
    ServletInputStream in = request.getInputStream();
    Body body = new Body(length);
    Problem refused;
    try {
      if (!body.readArrived(in, readable(request, in), start + graceNanos)) {
        if (!readers.tryAcquire()) {
          answer(request, response, Problem.of(PaymentsProblems.OVERLOADED)
              .withDetail("too many request bodies are being received; retry after a second"));
          return;
        }
        try {
          body.readAll(in, start + timeoutNanos);
        } finally {
          readers.release();
        }
      }
      refused = null;
    } catch (BodyTooSlow e) {
      refused = Problem.of(PaymentsProblems.BODY_TIMEOUT).withDetail("the body did not arrive within "
          + Duration.ofNanos(timeoutNanos).toMillis() + " ms; send it at once, and retry with the same key");
    } catch (BodyTooLarge e) {
      refused = Problem.of(ProblemCode.REQUEST_TOO_LARGE).withDetail("the body exceeds " + maxBytes + " bytes");
    } catch (IOException e) {
      refused = readFailure(e);
    }
    byte[] bytes = body.bytes();
    if (refused == null && isForm(request) && RequestTextFilter.queryProblem(new String(bytes, ISO_8859_1)) != null) {
      refused = Problem.of(PaymentsProblems.UNREADABLE_BODY)
          .withDetail("the form body's parameters could not be decoded; percent-encode them as UTF-8");
    }
    if (refused != null) {
      answer(request, response, refused);
      return;
    }
    chain.doFilter(HttpBodies.withBody(request, bytes), response);
  }

  /**
   * Whether a read of {@code in} will not block: bytes in the stream's buffer, or else in the connection when the
   * container can look there ({@link #READABLE}).
   */
  private static BooleanSupplier readable(HttpServletRequest request, ServletInputStream in) {
    Object attribute = request.getAttribute(READABLE);
    BooleanSupplier connection = attribute instanceof BooleanSupplier ? (BooleanSupplier) attribute : () -> false;
    return () -> {
      try {
        return in.available() > 0 || connection.getAsBoolean();
      } catch (IOException e) {
        return true; // the read will fail at once, and say why
      }
    };
  }

  private static boolean isForm(HttpServletRequest request) {
    String type = request.getContentType();
    return type != null && type.toLowerCase(Locale.ROOT).startsWith(FORM);
  }

  /** The problem for a read the container failed: its timeout, an early end, or broken framing. */
  private static Problem readFailure(IOException e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof InterruptedIOException) {
        return Problem.of(PaymentsProblems.BODY_TIMEOUT)
            .withDetail("the body stalled; send it at once, and retry with the same key");
      }
      if (t instanceof EOFException) {
        return Problem.of(PaymentsProblems.UNREADABLE_BODY).withDetail("the body ended before its Content-Length");
      }
    }
    return Problem.of(PaymentsProblems.UNREADABLE_BODY)
        .withDetail("the body's framing is broken; check its chunked coding or Content-Length");
  }

  /**
   * Answers {@code problem} and keeps it for the container's error dispatch, which answers instead when the container
   * had already marked the response as an error. {@link RefusedBodyValve} then closes the connection without
   * draining the rest of the body.
   */
  private void answer(HttpServletRequest request, HttpServletResponse response, Problem problem)
      throws IOException {
    registry.counter("payments.http.body.refused", "code", problem.code()).increment();
    request.setAttribute(PROBLEM, problem);
    ProblemResponse.send(response, problem);
  }

  /** A body being read: at most {@code maxBytes}, its declared length when known. */
  private final class Body {
    private final long length;
    private final ByteArrayOutputStream bytes;
    private final byte[] chunk = new byte[8192];

    Body(long length) {
      this.length = length;
      // grows with the bytes that arrive, not with what the caller declares
      this.bytes = new ByteArrayOutputStream(length > 0 ? (int) Math.min(length, chunk.length) : 1024);
    }

    /**
     * Takes what arrives until {@code graceDeadline}, reading only when {@code readable} says a read will not block;
     * true when that is the whole body. Only a body with a length is taken this way: a chunk's framing may need bytes
     * that have not arrived.
     */
    boolean readArrived(ServletInputStream in, BooleanSupplier readable, long graceDeadline) throws IOException {
      if (length <= 0) {
        return false;
      }
      while (bytes.size() < length) {
        if (readable.getAsBoolean()) {
          if (!take(in)) {
            return true;
          }
        } else if (System.nanoTime() - graceDeadline > 0) {
          return false;
        } else {
          LockSupport.parkNanos(LOOK_AGAIN_NANOS);
        }
      }
      return true;
    }

    /** Reads to the end, blocking, and fails once the deadline has passed. */
    void readAll(ServletInputStream in, long deadline) throws IOException {
      while (take(in)) {
        if (System.nanoTime() - deadline > 0) {
          throw new BodyTooSlow();
        }
      }
    }

    /** One read; false at the end of the body. */
    private boolean take(ServletInputStream in) throws IOException {
      int n = in.read(chunk);
      if (n < 0) {
        return false;
      }
      if (bytes.size() + (long) n > maxBytes) {
        throw new BodyTooLarge();
      }
      bytes.write(chunk, 0, n);
      return true;
    }

    byte[] bytes() {
      return bytes.toByteArray();
    }
  }

  private static final class BodyTooSlow extends IOException {
    private static final long serialVersionUID = 1L;

    BodyTooSlow() {
      super(null, null);
    }
  }

  private static final class BodyTooLarge extends IOException {
    private static final long serialVersionUID = 1L;

    BodyTooLarge() {
      super(null, null);
    }
  }
}
