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
 * <p>{@link JdbcRecordSearch} searches the JDBC store's table in one statement and reads keys only.
 * {@link #scanning(IdempotencyAdmin, int)} works on any store by paging through {@link IdempotencyAdmin#list}, up to
 * a bound: it reads whole records, which the store opens (and decrypts) before the search looks at their keys.
 */
@FunctionalInterface
public interface RecordSearch {
  /**
   * Scope, then operation, then key, by Java's string order: the order of the scanning search over every state. A
   * store's own order (a database's collation) may differ; each search keeps one order from page to page.
   */
  Comparator<RecordKey> ORDER = Comparator.comparing((RecordKey k) -> k.scope().value())
      .thenComparing(k -> k.operation().name()).thenComparing(k -> k.key().value());

  /**
   * Up to {@code limit} keys after {@code after} (exclusive) when not null, in one order from page to page: the last
   * key of a page, given back as {@code after}, starts the next page without skipping a key or repeating one.
   *
   * @param keyPart a part of the key, taken literally, or null for every key; visible ASCII only (the console checks)
   * @param state the state, or null for every state
   * @param after the last key of the previous page, or null
   * @param limit at least 1
   */
  List<RecordKey> find(String keyPart, RecordState state, RecordKey after, int limit);

  /**
   * A search over any store: pages through {@link IdempotencyAdmin#list} and keeps the keys that hold
   * {@code keyPart}, looking at no more than {@code maxScanned} records per state and search. On a large store it may
   * miss matches beyond the bound: use {@link JdbcRecordSearch} on a JDBC store.
   *
   * <p>Keys come in the store's order, which is the database's collation on a JDBC store, not Java's, and
   * {@code after} goes back to the store as it is, so that no key is skipped or shown twice between pages. With one
   * state, the search starts after {@code after} and stops once it has {@code limit} keys. Every state at once
   * ({@code state} null) has no order common to the store and this search, so each search reads the first
   * {@code maxScanned} records of every state, and answers the keys after {@code after} in {@link #ORDER}.
   *
   * @param maxScanned 1 to 1,000,000
   */
  static RecordSearch scanning(IdempotencyAdmin admin, int maxScanned) {
    Objects.requireNonNull(admin, "admin");
    if (maxScanned < 1 || maxScanned > 1_000_000) {
      throw new IllegalArgumentException("maxScanned must be 1 to 1000000, got " + maxScanned);
    }
    return (keyPart, state, after, limit) -> {
      if (state != null) {
        return scan(admin, maxScanned, keyPart, state, after, limit);
      }
      List<RecordKey> found = new ArrayList<>();
      for (RecordState s : RecordState.values()) {
        for (RecordKey k : scan(admin, maxScanned, keyPart, s, null, maxScanned)) {
          if (after == null || ORDER.compare(k, after) > 0) {
            found.add(k);
          }
        }
      }
      found.sort(ORDER);
      return found.size() > limit ? List.copyOf(found.subList(0, limit)) : found;
    };
  }

  /** Up to {@code limit} keys of a state holding {@code keyPart}, in the store's order, among maxScanned records. */
  private static List<RecordKey> scan(IdempotencyAdmin admin, int maxScanned, String keyPart, RecordState state,
      RecordKey after, int limit) {
    List<RecordKey> found = new ArrayList<>();
    int scanned = 0;
    RecordKey from = after;
    while (scanned < maxScanned && found.size() < limit) {
      int want = Math.min(200, maxScanned - scanned);
      List<IdempotencyRecord> page = admin.list(state, from, want);
      for (IdempotencyRecord r : page) {
        if ((keyPart == null || r.key().key().value().contains(keyPart)) && found.size() < limit) {
          found.add(r.key());
        }
      }
      scanned += page.size();
      if (page.size() < want) {
        break;
      }
      from = page.get(page.size() - 1).key();
    }
    return found;
  }
}
