package dev.idem.examples.payments.admin;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordState;
import dev.idem.examples.payments.payment.PaymentPhases;
import dev.idem.examples.payments.refund.RefundPhases;
import dev.idem.examples.payments.web.Json;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;

/**
 * An idempotency record as the admin routes show it: its key, state, recovery point, checkpoint, response status,
 * lease and times; never the request's or the response's body.
 */
public final class RecordJson {
  /** The provider call of each phased operation, by the name its key is derived with. */
  private static final Map<String, String> PROVIDER_CALLS =
      Map.of(PaymentPhases.OPERATION, "charge", RefundPhases.OPERATION, "refund");

  private RecordJson() {}

  /** The record's fields, in a mutable map the caller may add to. */
  public static Map<String, Object> of(IdempotencyRecord r) {
    return Json.document(
        "scope", r.key().scope().value(),
        "operation", r.key().operation().name(),
        "key", r.key().key().value(),
        "state", r.state().name().toLowerCase(Locale.ROOT),
        "recovery_point", r.recoveryPoint(),
        "checkpoint", r.checkpoint().values(),
        "response_status", r.response() == null ? null : r.response().status(),
        "lease_owner", r.leaseOwner(),
        "locked_until", time(r.lockedUntil()),
        "version", r.version(),
        "created_at", time(r.createdAt()),
        "updated_at", time(r.updatedAt()),
        "expires_at", time(r.expiresAt()),
        "resume_attempts", r.resumeAttempts(),
        "provider_key", providerKey(r));
  }

  /**
   * For an uncertain payment or refund: the idempotency key its provider call carried, by which an operator looks
   * the call up at the provider ({@code GET /provider/charges?idempotency_key=}); {@code null} otherwise. The console
   * shows it too ({@code ConsoleConfiguration}).
   */
  public static String providerKey(IdempotencyRecord r) {
    if (r.state() != RecordState.UNCERTAIN) {
      return null;
    }
    String call = PROVIDER_CALLS.get(r.key().operation().name());
    return call == null ? null : r.derive(call);
  }

  private static String time(Instant instant) {
    return instant == null ? null : instant.toString();
  }
}
