package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.Scope;
import dev.idem.core.StoredResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Rows written before {@code V4__idem_record_retention.sql}, or by a node not yet upgraded during a rolling upgrade:
 * without {@code retain_until} and {@code purge_at}. They keep the rules they were written under: the key is free at
 * their expiry, and purge deletes them by their {@code expires_at}.
 */
abstract class RowsFromBeforeRetentionContract {

  abstract JdbcDialect dialect();

  @Test
  void aRowWithoutRetentionIsFreeAtItsExpiryAndPurgedByItsExpiresAt() throws Exception {
    JdbcIdempotencyStore store = Databases.store(dialect());
    Scope scope = Scope.of("pre-v4-" + UUID.randomUUID());
    Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
    RecordKey expired = key(scope, "old-expired");
    RecordKey reused = key(scope, "old-reused");
    RecordKey live = key(scope, "old-live");
    insertAsBefore(expired, now.minus(Duration.ofDays(2)), now.minus(Duration.ofDays(1)));
    insertAsBefore(reused, now.minus(Duration.ofDays(2)), now.minus(Duration.ofDays(1)));
    insertAsBefore(live, now.minus(Duration.ofHours(1)), now.plus(Duration.ofDays(1)));

    IdempotencyRecord read = store.find(expired).orElseThrow();
    Execution again = Idem.builder().name("pre-v4").store(store).build().atomic(
        IdempotentRequest.of(reused, "{}".getBytes(StandardCharsets.UTF_8), "application/json"),
        tx -> StoredResponse.json(201, "{}"));
    while (store.purgeExpired(now, 1000) >= 1000) {
      // drain
    }

    assertThat(read.retainUntil()).isNull();
    assertThat(read.isGone(now)).isTrue();
    assertThat(again.outcome()).as("the key of an expired row from before runs again").isEqualTo(
        Execution.Outcome.STORED);
    assertThat(store.find(expired)).as("purged by its expires_at").isEmpty();
    assertThat(store.find(live)).isPresent();
  }

  private static RecordKey key(Scope scope, String key) {
    return new RecordKey(scope, Operation.of("POST /old"), IdempotencyKey.of(key));
  }

  /** A completed row as the store wrote it before the retention: the columns of V1 and V3 only. */
  private void insertAsBefore(RecordKey key, Instant createdAt, Instant expiresAt) throws Exception {
    try (Connection c = Databases.pool(dialect()).getConnection(); PreparedStatement ps = c.prepareStatement(
        "INSERT INTO idem_record (scope, operation, idem_key, state, fingerprint, response_status, response_body,"
            + " version, created_at, updated_at, expires_at) VALUES (?, ?, ?, 'completed', ?, 201, ?, 1, ?, ?, ?)")) {
      ps.setString(1, key.scope().value());
      ps.setString(2, key.operation().name());
      ps.setString(3, key.key().value());
      ps.setString(4, "0".repeat(64));
      ps.setBytes(5, "{\"old\":true}".getBytes(StandardCharsets.UTF_8));
      ps.setLong(6, createdAt.toEpochMilli());
      ps.setLong(7, createdAt.toEpochMilli());
      ps.setLong(8, expiresAt.toEpochMilli());
      ps.executeUpdate();
    }
  }
}
