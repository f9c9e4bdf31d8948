package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * MariaDB purge through a driver that sends its batches as bulk statements ({@code useBulkStmts=true}), which may
 * report each row's count as {@link Statement#SUCCESS_NO_INFO}: purge still counts the rows it deleted or shrank, so
 * that {@code purgeAllExpired} goes on until the table is clean.
 */
class MariaDbBulkPurgeTest {

  private static final Instant NOW = Instant.parse("2030-01-01T12:00:00Z");

  @Test
  void purgeCountsTheRowsOfABulkBatch() throws Exception {
    String url = Databases.url(JdbcDialect.MARIADB);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "useBulkStmts=true");
    config.setUsername(Databases.user(JdbcDialect.MARIADB));
    config.setPassword("");
    config.setMaximumPoolSize(2);
    config.setPoolName("test-mariadb-bulk");
    String table = "idem_bulk_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (HikariDataSource pool = new HikariDataSource(config)) {
      try {
        JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(pool).name("bulk").table(table)
            .createSchemaIfMissing(true).build();
        store.inTransaction(tx -> {
          for (int i = 0; i < 7; i++) {
            RecordKey key = RecordKey.of("tenant", "POST /payments", "k" + i);
            // expired a day ago, three of them still in their retention: those are shrunk, the others deleted
            assertThat(store.insert(tx, IdempotencyRecord.finished(key, Fingerprint.ofHash("0".repeat(64)),
                StoredResponse.of(201, "{}"), RecordState.COMPLETED, NOW.minus(Duration.ofDays(2)),
                Duration.ofDays(1), Duration.ofDays(i < 3 ? 30 : 0)))).isTrue();
          }
          return null;
        });

        int first = store.purgeExpired(NOW, 3);
        long rest = store.purgeAllExpired(NOW, 2);

        assertThat(first).isEqualTo(3);
        assertThat(rest).isEqualTo(4);
        try (Connection c = pool.getConnection(); PreparedStatement ps = c.prepareStatement(
            "SELECT COUNT(*), COUNT(response_body) FROM " + table); ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getLong(1)).as("the tombstones in their retention").isEqualTo(3);
          assertThat(rs.getLong(2)).as("responses kept past their expiry").isZero();
        }
      } finally {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
          st.execute("DROP TABLE IF EXISTS " + table);
          st.execute("DROP TABLE IF EXISTS " + table + "_audit");
        }
      }
    }
  }
}
