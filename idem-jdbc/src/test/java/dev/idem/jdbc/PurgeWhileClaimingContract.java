package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Scope;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Expiry: purge removes expired records in bounded batches while claims go on, including claims that reuse the very
 * keys being purged; every claim is stored (none waits out a lock timeout) and no expired record is left.
 */
abstract class PurgeWhileClaimingContract {
  private static final int EXPIRED = 3_000;
  private static final int BATCH = 250;

  abstract JdbcDialect dialect();

  @Test
  void purgeDeletesEveryExpiredRecordInBatchesWhileClaimsOfTheSameKeysContinue() throws Exception {
    JdbcIdempotencyStore store = Databases.store(dialect());
    Scope scope = Scope.of("purge-" + UUID.randomUUID());
    Instant now = Instant.ofEpochMilli(System.currentTimeMillis());
    insertExpired(store, scope, now.minus(Duration.ofDays(2)));
    Idem idem = Idem.builder().name("purge").store(store).build();
    int claimers = 4;
    // Each round: the purger deletes one batch while every claimer reuses one expired key (delete-if-expired, then
    // insert), all at once; the barrier keeps them in the same round without sleeping.
    CyclicBarrier round = new CyclicBarrier(claimers + 1);
    AtomicBoolean purging = new AtomicBoolean(true);
    ExecutorService pool = Executors.newFixedThreadPool(claimers);
    List<Future<List<Execution>>> results = new ArrayList<>();
    for (int t = 0; t < claimers; t++) {
      int thread = t;
      results.add(pool.submit(() -> {
        List<Execution> mine = new ArrayList<>();
        for (int i = 0; ; i++) {
          round.await(60, TimeUnit.SECONDS);
          if (!purging.get()) {
            return mine;
          }
          IdempotentRequest request = IdempotentRequest.of(scope, Operation.of("POST /old"),
              IdempotencyKey.of("old-" + (i * claimers + thread)), ("{\"i\":" + i + "}").getBytes());
          mine.add(idem.atomic(request, tx -> StoredResponse.json(201, "{}")));
          round.await(60, TimeUnit.SECONDS);
        }
      }));
    }

    List<Integer> batches = new ArrayList<>();
    int deleted;
    do {
      round.await(60, TimeUnit.SECONDS);
      deleted = store.purgeExpired(now, BATCH);
      batches.add(deleted);
      round.await(60, TimeUnit.SECONDS);
    } while (deleted > 0);
    purging.set(false);
    round.await(60, TimeUnit.SECONDS);
    List<Execution> claims = new ArrayList<>();
    for (Future<List<Execution>> f : results) {
      claims.addAll(f.get(120, TimeUnit.SECONDS));
    }
    pool.shutdown();

    assertThat(batches).allSatisfy(n -> assertThat(n).isBetween(0, BATCH));
    assertThat(batches.size()).isGreaterThan(2);
    assertThat(claims).hasSize(claimers * (batches.size()));
    assertThat(claims).allSatisfy(e -> assertThat(e.outcome()).isEqualTo(Execution.Outcome.STORED));
    assertThat(countExpired(scope, now)).isZero();
    assertThat(countLive(scope)).isEqualTo(claims.size());
  }

  private void insertExpired(JdbcIdempotencyStore store, Scope scope, Instant createdAt) throws Exception {
    store.inTransaction(tx -> {
      for (int i = 0; i < EXPIRED; i++) {
        RecordKey key = new RecordKey(scope, Operation.of("POST /old"), IdempotencyKey.of("old-" + i));
        store.insert(tx, IdempotencyRecord.finished(key, Fingerprint.ofHash("0".repeat(64)),
            StoredResponse.of(200, "old"), RecordState.COMPLETED, createdAt, Duration.ofHours(1)));
      }
      return null;
    });
  }

  private int countExpired(Scope scope, Instant now) throws Exception {
    return count("SELECT COUNT(*) FROM idem_record WHERE scope = ? AND expires_at <= ?", scope, now.toEpochMilli());
  }

  private int countLive(Scope scope) throws Exception {
    return count("SELECT COUNT(*) FROM idem_record WHERE scope = ? AND expires_at > ?", scope,
        System.currentTimeMillis());
  }

  private int count(String sql, Scope scope, long millis) throws Exception {
    try (Connection c = Databases.pool(dialect()).getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, scope.value());
      ps.setLong(2, millis);
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
