package dev.idem.core;

import java.time.Instant;
import java.util.Objects;

/**
 * One resolution of a record, as the store's audit keeps it: who decided, when, what, from which state to which, and
 * why. Immutable. Audit entries outlive their record (purge and eviction leave them), so that a decision can be
 * traced after the record is gone.
 *
 * @param key the record
 * @param version the record's version the resolution wrote
 * @param at when
 * @param actor who: an operator, or {@code reconciler '<instance>'}
 * @param action what
 * @param from the state before (UNCERTAIN)
 * @param to the state after
 * @param reason why
 */
public record AuditEntry(RecordKey key, long version, Instant at, String actor, Resolution.Action action,
    RecordState from, RecordState to, String reason) {

  public AuditEntry {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(at, "at");
    Objects.requireNonNull(actor, "actor");
    Objects.requireNonNull(action, "action");
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(to, "to");
    Objects.requireNonNull(reason, "reason");
  }

  /** The entry for {@code resolution} taking {@code before} to {@code after}. */
  public static AuditEntry of(IdempotencyRecord before, IdempotencyRecord after, Resolution resolution) {
    return new AuditEntry(after.key(), after.version(), resolution.at(), resolution.actor(), resolution.action(),
        before.state(), after.state(), resolution.reason());
  }
}
