package dev.idem.core.spi;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import java.util.List;

/**
 * The operator side of an {@link IdempotencyStore}: listing records and evicting one, off the hot path. The executor
 * and the completer never call it; operator endpoints and consoles do. Get it from {@link IdempotencyStore#admin()}.
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
}
