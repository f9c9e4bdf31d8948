package dev.idem.examples.payments.admin;

import dev.idem.core.IdempotencyRecord;
import dev.idem.examples.payments.web.Json;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;

/**
 * An idempotency record as the admin routes and the console show it: its key, state, recovery point, checkpoint,
 * response status, lease and times; never the request's or the response's body. Shared by the admin listing and the
 * console.
 */
public final class RecordJson {
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
        "expires_at", time(r.expiresAt()));
  }

  private static String time(Instant instant) {
    return instant == null ? null : instant.toString();
  }
}
