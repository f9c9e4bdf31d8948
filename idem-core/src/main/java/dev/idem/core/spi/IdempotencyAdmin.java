package dev.idem.core.spi;

import dev.idem.core.AuditEntry;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import java.util.List;
import java.util.Optional;

/**
 * The operator side of an {@link IdempotencyStore}: listing records, evicting one, and resolving uncertain ones with
 * an audit, off the hot path. The executor never calls it; operator endpoints, consoles and the completer's
 * reconciliation rounds do. Get it from {@link IdempotencyStore#admin()}.
 *
 * <p>It works on the same records as its store. Each method runs in its own short transaction, never in a
 * {@link StoreTransaction}. Implementations are thread-safe. The contract test kit in {@code idem-test}
 * ({@code IdempotencyStoreContract}) pins both methods down through {@code store.admin()}.
 */
public interface IdempotencyAdmin {

  /**
   * A page of records in a state, ordered by key, starting after {@code after} (exclusive; {@code null} for the
   * first page).
   */
  List<IdempotencyRecord> list(RecordState state, RecordKey after, int limit);

  /** Deletes a record whatever its state (operator eviction). Returns whether it existed. */
  boolean evict(RecordKey key);

  /**
   * Applies {@code resolution} to the {@link RecordState#UNCERTAIN} record of {@code key}, if its stored version is
   * {@code version} ({@link IdempotencyRecord#resolve}), and keeps its {@link AuditEntry}, both in one transaction:
   * the audit holds exactly the resolutions that took effect. Of two resolutions read at the same version, exactly
   * one takes effect (fencing).
   *
   * @return the audit entry, or empty when the record is absent, not uncertain, or at another version
   */
  default Optional<AuditEntry> resolve(RecordKey key, long version, Resolution resolution) {
    throw new UnsupportedOperationException(this + " does not resolve records");
  }

  /**
   * The audit of {@code key}: every resolution that took effect on it, oldest first, including those of records
   * since purged or evicted.
   */
  default List<AuditEntry> history(RecordKey key) {
    throw new UnsupportedOperationException(this + " keeps no audit");
  }
}
