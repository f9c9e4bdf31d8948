package dev.idem.console;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.spi.IdempotencyAdmin;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * Finds records by a part of their key, in every scope and operation: the console's search box. It answers record
 * keys only; the console reads the records through the store, which alone knows how they decode (and decrypts them).
 * Implementations are thread-safe.
 *
 * <p>{@link JdbcRecordSearch} searches the JDBC store's table in one statement. {@link #scanning(IdempotencyAdmin,
 * int)} works on any store by paging through {@link IdempotencyAdmin#list}, up to a bound.
 */
@FunctionalInterface
public interface RecordSearch {
  /** The order of every answer: scope, then operation, then key. */
  Comparator<RecordKey> ORDER = Comparator.comparing((RecordKey k) -> k.scope().value())
      .thenComparing(k -> k.operation().name()).thenComparing(k -> k.key().value());

  /**
   * Up to {@code limit} keys, in {@link #ORDER}, after {@code after} (exclusive) when not null.
   *
   * @param keyPart a part of the key, taken literally, or null for every key; visible ASCII only (the console checks)
   * @param state the state, or null for every state
   * @param after the last key of the previous page, or null
   * @param limit at least 1
   */
  List<RecordKey> find(String keyPart, RecordState state, RecordKey after, int limit);

  /**
   * A search over any store: pages through {@link IdempotencyAdmin#list} state by state, looking at no more than
   * {@code maxScanned} records per state and search, and keeps the keys that hold {@code keyPart}. On a large store
   * it may miss matches beyond the bound: use {@link JdbcRecordSearch} on a JDBC store.
   *
   * @param maxScanned 1 to 1,000,000
   */
  static RecordSearch scanning(IdempotencyAdmin admin, int maxScanned) {
    Objects.requireNonNull(admin, "admin");
    if (maxScanned < 1 || maxScanned > 1_000_000) {
      throw new IllegalArgumentException("maxScanned must be 1 to 1000000, got " + maxScanned);
    }
    return (keyPart, state, after, limit) -> {
      List<RecordState> states = state == null ? List.of(RecordState.values()) : List.of(state);
      List<RecordKey> found = new ArrayList<>();
      for (RecordState s : states) {
        int scanned = 0;
        int matched = 0;
        RecordKey from = after;
        while (scanned < maxScanned && matched < limit) {
          int want = Math.min(200, maxScanned - scanned);
          List<IdempotencyRecord> page = admin.list(s, from, want);
          for (IdempotencyRecord r : page) {
            if ((keyPart == null || r.key().key().value().contains(keyPart)) && matched < limit) {
              found.add(r.key());
              matched++;
            }
          }
          scanned += page.size();
          if (page.size() < want) {
            break;
          }
          from = page.get(page.size() - 1).key();
        }
      }
      found.sort(ORDER);
      return found.size() > limit ? List.copyOf(found.subList(0, limit)) : found;
    };
  }
}
