package dev.idem.servlet;

import dev.idem.core.Execution;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.RecordKey;
import dev.idem.core.Scope;
import dev.idem.core.spi.StoreTransaction;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Objects;
import java.util.Optional;

/**
 * One idempotent request as the handler sees it, found with {@link #current}. It carries the validated key, the
 * scope and the buffered request, and gives the handler what its mode needs:
 *
 * <ul>
 *   <li>atomic routes: {@link #transaction()}, the store transaction that the record commits in. With the JDBC
 *       store, {@code JdbcTransaction.connectionOf(exchange.transaction())} is the connection to write with.
 *   <li>phased routes: {@link #phased}, which runs (or resumes, or replays) the registered phased operation and
 *       writes its answer.
 * </ul>
 *
 * Not thread-safe: it belongs to one request.
 */
public final class IdempotentExchange {
  /** The request attribute that holds the exchange. */
  public static final String ATTRIBUTE = IdempotentExchange.class.getName();

  private final IdempotencyFilter filter;
  private final IdempotentRoute route;
  private final IdempotentRequest request;
  private final String keyHeader;
  private StoreTransaction transaction;
  private Execution execution;
  private volatile boolean handlerStarted;
  private volatile boolean workRan;

  IdempotentExchange(IdempotencyFilter filter, IdempotentRoute route, IdempotentRequest request, String keyHeader) {
    this.filter = filter;
    this.route = route;
    this.request = request;
    this.keyHeader = keyHeader;
  }

  /**
   * The exchange of a request on an idempotent route.
   *
   * @throws IllegalStateException when the request did not pass through the filter as an idempotent request
   */
  public static IdempotentExchange current(ServletRequest request) {
    return find(request).orElseThrow(() -> new IllegalStateException("this request is not an idempotent request:"
        + " no IdempotencyFilter route matched it, or it carried no key on a route where the key is optional"));
  }

  public static Optional<IdempotentExchange> find(ServletRequest request) {
    Object e = request.getAttribute(ATTRIBUTE);
    return e instanceof IdempotentExchange ? Optional.of((IdempotentExchange) e) : Optional.empty();
  }

  public IdempotentRoute route() {
    return route;
  }

  /** What the executor sees: record key and body. */
  public IdempotentRequest request() {
    return request;
  }

  public RecordKey recordKey() {
    return request.recordKey();
  }

  public Scope scope() {
    return request.scope();
  }

  public IdempotencyKey key() {
    return request.key();
  }

  /** The Idempotency-Key header as the client sent it (echoed on every answer). */
  public String keyHeader() {
    return keyHeader;
  }

  /**
   * The store transaction of an atomic (or leased-on-transactional-store) route, open while the handler runs.
   *
   * @throws IllegalStateException outside the handler of an atomic route
   */
  public StoreTransaction transaction() {
    if (transaction == null) {
      throw new IllegalStateException("no transaction is bound to " + recordKey() + ": only handlers of atomic"
          + " routes run inside one (this route is " + route + ")");
    }
    return transaction;
  }

  /**
   * Runs the phased operation registered for this route's operation and writes its answer (the stored or replayed
   * response, or a problem for a payload mismatch or a request in progress) with the contract's headers.
   *
   * @return the execution, for the handler's own bookkeeping
   * @throws IllegalStateException when the route is not phased, or the exchange already ran
   * @throws RuntimeException what a phase threw (the record was released for a retry)
   */
  public Execution phased(HttpServletResponse response) throws IOException {
    Objects.requireNonNull(response, "response");
    if (route.mode() != IdempotentRoute.Mode.PHASED) {
      throw new IllegalStateException("phased(...) is for phased routes; " + route + " is not");
    }
    if (execution != null) {
      throw new IllegalStateException("the exchange of " + recordKey() + " already ran");
    }
    execution = filter.runPhased(this, response);
    return execution;
  }

  /** The execution, once it ran; empty before. */
  public Optional<Execution> execution() {
    return Optional.ofNullable(execution);
  }

  /**
   * Says that the application's handler has started: the framework in front of it accepted the request (routing,
   * content negotiation, conversion, binding, validation) and the handler's own code runs. With
   * {@link IdempotencyFilter.Builder#keepOnlyStartedHandlers(boolean)} on, a 4xx answer is kept only after this call,
   * so that a refusal of the framework's leaves no record and the corrected retry with the same key runs. The Spring
   * Boot starter calls it on entry to every {@code @Idempotent} method.
   */
  public void markHandlerStarted() {
    this.handlerStarted = true;
  }

  /** Whether {@link #markHandlerStarted()} was called. */
  public boolean handlerStarted() {
    return handlerStarted;
  }

  /** The filter is running the handler of an atomic or leased route. */
  void workRan() {
    this.workRan = true;
  }

  /** Whether the filter ran the handler of an atomic or leased route. */
  boolean hasWorkRun() {
    return workRan;
  }

  void bind(StoreTransaction tx) {
    this.transaction = tx;
  }

  void executed(Execution e) {
    this.execution = e;
  }

  @Override
  public String toString() {
    return "IdempotentExchange[" + recordKey() + ", " + route + "]";
  }
}
