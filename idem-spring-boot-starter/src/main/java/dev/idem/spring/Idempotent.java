package dev.idem.spring;

import dev.idem.servlet.IdempotentRoute;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes a method idempotent. On a Spring MVC handler method (of a {@code @Controller}) it marks an HTTP route: its
 * unsafe requests need an {@code Idempotency-Key}, and Idem decides whether each one runs, replays or is refused (see
 * the HTTP contract in the README). The operation is {@code "<METHOD> <route template>"} of the method's mapping,
 * such as {@code POST /payments}.
 *
 * <pre>{@code
 * @PostMapping("/orders")
 * @Idempotent(ttl = "48h", fingerprintExclude = "/client_timestamp")
 * @Transactional
 * public ResponseEntity<Order> create(@RequestBody NewOrder order) { ... }   // joins the record's transaction
 *
 * @PostMapping("/payments")
 * @Idempotent(mode = IdempotentRoute.Mode.PHASED)
 * public void pay(HttpServletRequest request, HttpServletResponse response) throws IOException {
 *   IdempotentExchange.current(request).phased(response);     // runs the PhasedOperation bean "POST /payments"
 * }
 * }</pre>
 *
 * <p>On a method of any other Spring bean (a service, a message listener, a scheduled job) it makes the call
 * idempotent ({@code dev.idem.spring.method}): {@link #key()} names the key from the arguments, the return value is
 * kept (serialised with the application's {@code ObjectMapper}, generic types included), and a call with the same key
 * returns it again without running the method. {@link #keepExceptions()} names the exceptions that are kept and
 * thrown again to duplicates (as {@link dev.idem.core.ReplayedFailureException}); every other exception frees the
 * key. ATOMIC (the default) runs the method in the transaction that writes the record, joining the caller's Spring
 * transaction when there is one; LEASED claims the key with a lease instead. See docs/methods.md.
 *
 * <pre>{@code
 * @Idempotent(key = "#command.id", scope = "#command.tenant", keepExceptions = OutOfStockException.class)
 * public Receipt place(PlaceOrder command) { ... }
 * }</pre>
 *
 * Durations are Spring Boot duration strings ({@code "30s"}, {@code "24h"}, {@code "PT24H"}); an empty string means
 * the {@code idem.*} default. Invalid values fail the application at startup, naming the method.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

  /**
   * How requests execute. ATOMIC: the handler's (or the method's) transactional work commits with the record.
   * PHASED is for HTTP routes only.
   */
  IdempotentRoute.Mode mode() default IdempotentRoute.Mode.ATOMIC;

  /** How long the answer is kept and replayed; default {@code idem.default-ttl} (24 h). */
  String ttl() default "";

  /**
   * How long past the TTL the key stays taken: a retry with it is refused as {@code key_expired} (422) instead of
   * running again; {@code "0s"} frees the key at the TTL. Default {@code idem.default-retention} (30 days).
   */
  String retention() default "";

  /** How long a phased or leased execution may hold the key before the completer may take over. */
  String lease() default "";

  /**
   * JSON Pointers of the only fields the fingerprint covers; empty means the whole body. On a bean method without
   * {@link #fingerprint()}, each starts with a parameter's name ({@code /order/amount}), or the start fails.
   */
  String[] fingerprintInclude() default {};

  /**
   * JSON Pointers of volatile fields the fingerprint ignores (timestamps, trace ids). On a bean method without
   * {@link #fingerprint()}, each starts with a parameter's name, or the start fails.
   */
  String[] fingerprintExclude() default {};

  /** Statuses kept in addition to the defaults (2xx and deterministic 4xx). */
  int[] keepStatuses() default {};

  /** Statuses never kept, in addition to 408, 409, 425, 429 and 5xx. */
  int[] neverKeepStatuses() default {};

  /**
   * Phased and leased modes: a duplicate that arrives while the first is in flight waits up to this long and then
   * gets the replay, instead of 409 at once. Empty: answer 409 with Retry-After. Not for {@code ATOMIC} (the
   * application fails at startup): there a concurrent duplicate waits on the store's lock timeout instead.
   */
  String waitInFlight() default "";

  /**
   * Atomic and phased modes: whether the record is read before the work (the first phase) runs (the default). The
   * read answers a duplicate that arrives after the first execution committed; a concurrent duplicate (the first not
   * committed yet) finds nothing and runs the work too either way, then waits for the first to commit on the record's
   * unique key, rolls its transaction back and replays: only the work's writes in that transaction are undone, so
   * work that calls other systems belongs in leased mode. {@code false} saves that read on every first execution and
   * lets the record's unique key decide at the end: every duplicate then runs the work (the first phase) too, finds
   * the record when its insert collides, rolls that transaction back and replays (or, phased, answers as the record
   * in flight says). Choose it only when every effect of that work is in the transaction (nothing sent outside it)
   * and duplicates are rare. Ignored in leased mode.
   */
  boolean lookupFirst() default true;

  /**
   * On a bean method: SpEL over the arguments giving the caller's attempt number with the key (1 for the first), such
   * as {@code "#command.attempt"} or a message's delivery count. An atomic first attempt skips the read before the
   * work and lets the record's unique key decide; later attempts read the record first, so a retry after the first
   * committed replays without running the method (see {@link #lookupFirst()} for what a duplicate first attempt
   * does). A value that is not a whole number of at least 1 fails the call. Empty (the default): no attempt number.
   * The attempt number must stay out of the fingerprint, or a retry would be refused as another request: a parameter
   * the expression names alone ({@code "#attempt"}) is left out of the default fingerprint; otherwise exclude it
   * ({@code fingerprintExclude = "/command/attempt"}) or name what the fingerprint covers. Bean methods only: on a
   * controller it stops the start.
   */
  String attempt() default "";

  /**
   * Whether a request without a key is refused (400) or runs as if the method were not idempotent. On a bean
   * method: whether a {@link #key()} that evaluates to {@code null} or blank fails the call
   * ({@code IllegalArgumentException}) or runs the method as it is.
   */
  boolean keyRequired() default true;

  /**
   * Bean methods only (required there): a SpEL expression over the arguments that gives the idempotency key, such
   * as {@code "#order.id"}, {@code "#p0"} or {@code "'refund-' + #refund.id"}. The value's {@code toString()} must be
   * 1 to 255 visible ASCII characters. Beans are reachable as {@code @name}.
   */
  String key() default "";

  /**
   * Bean methods only: a SpEL expression over the arguments that gives the scope the key lives in, such as
   * {@code "#order.tenantId"}; keys never cross scopes. Empty: one fixed scope, the Idem instance's name
   * ({@code idem.name}, {@code default} unless set). Name a scope whenever the key comes from a tenant or a client.
   */
  String scope() default "";

  /** Bean methods only: the operation the record is kept under. Empty: {@code <fully qualified class>#<method>}. */
  String operation() default "";

  /**
   * Bean methods only: a SpEL expression over the arguments that gives what the fingerprint covers, serialised to
   * JSON, such as {@code "#order"}; a duplicate key with another fingerprint is refused
   * ({@link dev.idem.core.PayloadMismatchException}). {@link #fingerprintInclude()} and
   * {@link #fingerprintExclude()} then point into that JSON. Empty: all arguments, as a JSON object by parameter
   * name ({@code /order/amount}).
   */
  String fingerprint() default "";

  /**
   * Bean methods only: the exceptions (and their subclasses) that are deterministic: the same call would fail the
   * same way again. They are kept and re-thrown to duplicates as {@link dev.idem.core.ReplayedFailureException}.
   * Empty (the default): no exception is kept, every failure frees the key for a retry. In {@code ATOMIC} mode any
   * exception, kept or not, checked or named by {@code @Transactional(noRollbackFor)}, rolls the method's writes back
   * and marks the transaction rollback-only: nothing the method wrote commits without its value.
   */
  Class<? extends Throwable>[] keepExceptions() default {};
}
