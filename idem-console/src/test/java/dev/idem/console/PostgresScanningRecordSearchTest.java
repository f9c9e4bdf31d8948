package dev.idem.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.test.TestPostgres;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link RecordSearch#scanning} on a JDBC store whose keys sort in a linguistic collation (PostgreSQL's
 * {@code en-US-x-icu}, set on the key column, since the test database's own is {@code C}): there {@code a} sorts
 * before {@code B}, in Java after it. Page after page, with the last key as the cursor, every key comes once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PostgresScanningRecordSearchTest {
  private static final String TABLE = "idem_console_collation";
  private static final List<String> COMPLETED = List.of("a-1", "B-2", "c-3", "D-4", "e-5");
  private static final List<String> FAILED = List.of("A-6", "b-7", "C-8");

  private JdbcIdempotencyStore store;
  private RecordSearch search;

  @BeforeAll
  void createRecords() throws Exception {
    TestPostgres.drop(TABLE + "_audit", TABLE);
    store = JdbcIdempotencyStore.builder(TestPostgres.postgres()).table(TABLE).createSchemaIfMissing(true).build();
    try (Connection c = TestPostgres.postgres().getConnection(); Statement st = c.createStatement()) {
      st.execute("ALTER TABLE " + TABLE + " ALTER COLUMN idem_key TYPE VARCHAR(255) COLLATE \"en-US-x-icu\"");
    }
    Instant now = Instant.now();
    for (String key : COMPLETED) {
      insert(key, RecordState.COMPLETED, now);
    }
    for (String key : FAILED) {
      insert(key, RecordState.FAILED, now);
    }
    search = RecordSearch.scanning(store.admin(), 1000);
  }

  @AfterAll
  void dropTable() {
    TestPostgres.drop(TABLE + "_audit", TABLE);
  }

  private void insert(String key, RecordState state, Instant now) throws Exception {
    IdempotencyRecord r = IdempotencyRecord.finished(RecordKey.of("tenant", "POST /orders", key),
        Fingerprint.ofHash("d".repeat(64)), StoredResponse.of(state == RecordState.COMPLETED ? 201 : 409, Map.of(),
            new byte[0]), state, now, Duration.ofHours(1));
    boolean inserted = store.inTransaction(tx -> store.insert(tx, r));
    assertThat(inserted).isTrue();
  }

  /** Every key the search answers, page by page of {@code limit}, each page after the last key of the one before. */
  private List<String> pages(String keyPart, RecordState state, int limit) {
    List<String> seen = new ArrayList<>();
    RecordKey after = null;
    for (int page = 0; page < 20; page++) {
      // as the console asks: one more than the page, to know whether another follows
      List<RecordKey> found = search.find(keyPart, state, after, limit + 1);
      found.stream().limit(limit).forEach(k -> seen.add(k.key().value()));
      if (found.size() <= limit) {
        return seen;
      }
      after = found.get(limit - 1);
    }
    throw new AssertionError("more than 20 pages: " + seen);
  }

  @Test
  void theKeyColumnSortsOtherwiseThanJava() {
    List<String> listed = store.admin().list(RecordState.COMPLETED, null, 10).stream()
        .map(r -> r.key().key().value()).toList();

    assertThat(listed).as("the store's own order").containsExactly("a-1", "B-2", "c-3", "D-4", "e-5");
    assertThat("B-2").as("Java's order").isLessThan("a-1");
  }

  @Test
  void pagesOfOneStateShowEveryKeyOnce() {
    for (int limit = 1; limit <= 3; limit++) {
      assertThat(pages(null, RecordState.COMPLETED, limit)).as("limit " + limit)
          .containsExactlyInAnyOrderElementsOf(COMPLETED);
      assertThat(pages("-", RecordState.COMPLETED, limit)).as("limit " + limit + ", with a key part")
          .containsExactlyInAnyOrderElementsOf(COMPLETED);
    }
  }

  @Test
  void pagesOfEveryStateShowEveryKeyOnce() {
    List<String> all = new ArrayList<>(COMPLETED);
    all.addAll(FAILED);

    for (int limit = 1; limit <= 3; limit++) {
      assertThat(pages(null, null, limit)).as("limit " + limit).containsExactlyInAnyOrderElementsOf(all);
      assertThat(pages("-", null, limit)).as("limit " + limit + ", with a key part")
          .containsExactlyInAnyOrderElementsOf(all);
    }
  }
}
