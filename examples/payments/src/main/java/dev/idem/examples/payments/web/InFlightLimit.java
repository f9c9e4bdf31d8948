package dev.idem.examples.payments.web;

import dev.idem.core.Deadline;
import dev.idem.core.protocol.IdemHeaders;
import dev.idem.servlet.Problem;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A bound on the requests the service serves at once ({@code payments.admission.max-in-flight}), so that the
 * container's request threads (Tomcat: 200) never queue on a connection pool smaller than them: a request beyond the
 * bound waits for a slot, first come first served, at most {@code payments.admission.max-wait} (1 s by default), so
 * that a short burst passes, and never past the request's deadline ({@code Request-Timeout}, which the deadline filter,
 * ordered before this one, has bound to the thread: {@link Deadline#current()}); then it is answered 503
 * {@code TRANSIENT.overloaded} ({@link PaymentsProblems#OVERLOADED}, retryable, with {@code Retry-After}), before
 * it has done anything, taken a connection or created an idempotency record, so a retry with the same key is served
 * as if it were the first attempt. The bound is checked against the
 * pool when the service starts ({@link dev.idem.examples.payments.PaymentsProperties.Admission#boundFor}): every
 * admitted request can have the two connections an idempotent request may hold at once.
 *
 * <p>Not bounded: the actuator ({@code /actuator/**}: health probes, metrics, which must answer most when the service
 * is busiest) and the console's files ({@code /console/**}, served from the class path without the database). The
 * console's data under {@code /console/api} and every other route are bounded.
 *
 * <p>Runs after {@link RequestBodyGuard} and {@link RequestTextFilter} (the body has arrived whole, and the slot is
 * not held while a slow client sends it) and before authentication and the idempotency filter, neither of which
 * should run for a request that is refused: a refusal costs no key lookup and never reaches the code that takes
 * connections. A request waiting for a slot holds its container thread, never a connection. Thread-safe.
 */
public final class InFlightLimit extends HttpFilter {
  /** After {@link RequestTextFilter}, before the console's files, authentication and the idempotency filter. */
  public static final int ORDER = RequestTextFilter.ORDER + 10;
  private static final long serialVersionUID = 1L;
  private static final System.Logger LOG = System.getLogger(InFlightLimit.class.getName());
  /** At most one warning about refusals per this many nanoseconds. */
  private static final long WARN_EVERY_NANOS = 60_000_000_000L;

  private final int bound;
  private final long maxWaitNanos;
  private final long retryAfterSeconds;
  private final transient Semaphore slots;
  private final transient LongAdder refused = new LongAdder();
  private final transient AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

  /**
   * @param bound requests served at once, at least 1
   * @param maxWait how long a request waits for a slot before it is refused, zero or more
   * @param retryAfterSeconds the {@code Retry-After} of a refusal, at least 1
   */
  public InFlightLimit(int bound, Duration maxWait, long retryAfterSeconds) {
    if (bound < 1 || maxWait.isNegative() || retryAfterSeconds < 1) {
      throw new IllegalArgumentException("the bound and Retry-After must be at least 1 and the wait not negative,"
          + " got " + bound + ", " + retryAfterSeconds + " and " + maxWait);
    }
    this.bound = bound;
    this.maxWaitNanos = maxWait.toNanos();
    this.retryAfterSeconds = retryAfterSeconds;
    // fair: the requests that wait for a slot get one in the order they came
    this.slots = new Semaphore(bound, true);
  }

  @Override
  protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws IOException, ServletException {
    if (exempt(request)) {
      chain.doFilter(request, response);
      return;
    }
    if (!admit(Deadline.current().map(Deadline::remainingNanos).orElse(Long.MAX_VALUE))) {
      refuse(response);
      return;
    }
    try {
      chain.doFilter(request, response);
    } finally {
      slots.release();
    }
  }

  /** Takes a slot, waiting at most {@code maxWaitNanos} and at most {@code remainingNanos} (the deadline's). */
  private boolean admit(long remainingNanos) {
    try {
      return slots.tryAcquire(Math.max(0, Math.min(maxWaitNanos, remainingNanos)), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      // the container is stopping: refuse, as if no slot came
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private void refuse(HttpServletResponse response) throws IOException {
    refused.increment();
    long now = System.nanoTime();
    long last = lastWarning.get();
    if (now - last >= WARN_EVERY_NANOS && lastWarning.compareAndSet(last, now)) {
      LOG.log(System.Logger.Level.WARNING, "payments.admission.max-in-flight (" + bound + ") reached: refusing"
          + " requests with 503 " + PaymentsProblems.OVERLOADED.code() + " (" + refused.sum() + " so far); at most one"
          + " such line a minute");
    }
    response.setHeader(IdemHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds));
    Problem.of(PaymentsProblems.OVERLOADED).withDetail("the service is serving as many requests as it allows at"
        + " once and none ended in time; nothing was done, retry after " + retryAfterSeconds + " s with the same"
        + " Idempotency-Key")
        .write(response);
  }

  /** Whether the request passes without a slot: the actuator and the console's files. */
  static boolean exempt(HttpServletRequest request) {
    // the servlet path is decoded and normalized: "/actuator/../payments" is "/payments" here
    String path = request.getServletPath() + (request.getPathInfo() == null ? "" : request.getPathInfo());
    return under(path, "/actuator") || (under(path, "/console") && !under(path, "/console/api"));
  }

  private static boolean under(String path, String prefix) {
    return path.equals(prefix) || path.startsWith(prefix + "/");
  }

  /** The bound: requests served at once. */
  public int bound() {
    return bound;
  }

  /** The requests being served under the bound now. */
  public int inFlight() {
    return bound - slots.availablePermits();
  }

  /** The requests refused since the start. */
  public long refused() {
    return refused.sum();
  }
}
