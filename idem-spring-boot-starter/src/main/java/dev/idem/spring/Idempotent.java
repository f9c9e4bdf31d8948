package dev.idem.spring;

import dev.idem.servlet.IdempotentRoute;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a Spring MVC handler method as idempotent: its unsafe requests need an {@code Idempotency-Key}, and Idem
 * decides whether each one runs, replays or is refused (see the HTTP contract in the README). The operation is
 * {@code "<METHOD> <route template>"} of the method's mapping, such as {@code POST /payments}.
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
 * Durations are Spring Boot duration strings ({@code "30s"}, {@code "24h"}, {@code "PT24H"}); an empty string means
 * the {@code idem.*} default. Invalid values fail the application at startup, naming the method.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

  /** How requests execute. ATOMIC: the handler's transactional work commits with the record. */
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

  /** JSON Pointers of the only fields the fingerprint covers; empty means the whole body. */
  String[] fingerprintInclude() default {};

  /** JSON Pointers of volatile fields the fingerprint ignores (timestamps, trace ids). */
  String[] fingerprintExclude() default {};

  /** Statuses kept in addition to the defaults (2xx and deterministic 4xx). */
  int[] keepStatuses() default {};

  /** Statuses never kept, in addition to 408, 409, 425, 429 and 5xx. */
  int[] neverKeepStatuses() default {};

  /**
   * A duplicate that arrives while the first is in flight waits up to this long and then gets the replay, instead
   * of 409 at once. Empty: answer 409 with Retry-After.
   */
  String waitInFlight() default "";

  /** Whether a request without a key is refused (400) or runs as if the method were not idempotent. */
  boolean keyRequired() default true;
}
