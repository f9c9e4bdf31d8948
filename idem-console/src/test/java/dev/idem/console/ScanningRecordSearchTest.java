package dev.idem.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.memory.InMemoryIdempotencyStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link RecordSearch#scanning}, the search of stores without a table: on the in-memory store. */
class ScanningRecordSearchTest {
  private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
  private final Instant now = Instant.now();

  private RecordKey record(String scope, String key, RecordState state) throws Exception {
    RecordKey k = RecordKey.of(scope, "POST /orders", key);
    IdempotencyRecord r = state == RecordState.IN_PROGRESS
        ? IdempotencyRecord.claimed(k, Fingerprint.ofHash("c".repeat(64)), "w", now, Duration.ofMinutes(1),
            Duration.ofHours(1))
        : IdempotencyRecord.finished(k, Fingerprint.ofHash("c".repeat(64)),
            StoredResponse.of(state == RecordState.COMPLETED ? 201 : 409, Map.of(), new byte[0]), state, now,
            Duration.ofHours(1));
    boolean inserted = store.inTransaction(tx -> store.insert(tx, r));
    assertThat(inserted).isTrue();
    return k;
  }

  @Test
  void findsKeysHoldingThePartInEveryStateInKeyOrderPageByPage() throws Exception {
    RecordKey a = record("alice", "order-17-a", RecordState.COMPLETED);
    RecordKey b = record("alice", "order-17-b", RecordState.IN_PROGRESS);
    RecordKey c = record("bob", "order-17-c", RecordState.FAILED);
    record("bob", "order-18-d", RecordState.COMPLETED);
    RecordSearch search = RecordSearch.scanning(store.admin(), 1000);

    List<RecordKey> first = search.find("-17-", null, null, 2);
    List<RecordKey> second = search.find("-17-", null, first.get(1), 2);
    List<RecordKey> completed = search.find(null, RecordState.COMPLETED, null, 10);

    assertThat(first).containsExactly(a, b);
    assertThat(second).containsExactly(c);
    assertThat(completed).extracting(k -> k.key().value()).containsExactly("order-17-a", "order-18-d");
  }

  @Test
  void looksAtNoMoreRecordsThanItsBound() throws Exception {
    List<RecordKey> made = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      made.add(record("carol", String.format("k-%02d", i), RecordState.COMPLETED));
    }

    List<RecordKey> bounded = RecordSearch.scanning(store.admin(), 10).find("k-2", RecordState.COMPLETED, null, 50);
    List<RecordKey> all = RecordSearch.scanning(store.admin(), 100).find("k-2", RecordState.COMPLETED, null, 50);

    assertThat(bounded).as("k-20 to k-29 lie beyond the first 10 records").isEmpty();
    assertThat(all).containsExactlyElementsOf(made.subList(20, 30));
    assertThatThrownBy(() -> RecordSearch.scanning(store.admin(), 0)).hasMessageContaining("maxScanned");
  }
}
