package dev.idem.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import dev.idem.core.AuditEntry;
import dev.idem.core.Checkpoint;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.Scope;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every {@link IdempotencyStore} must pass. Extend it and implement {@link #createStore()}; the tests
 * use a fresh random scope each, so they can share a database with other data.
 */
public abstract class IdempotencyStoreContract {
  protected static final String HASH_A = "a".repeat(64);
  protected static final String HASH_B = "b".repeat(64);

  protected IdempotencyStore store;
  protected Scope scope;
  protected Instant now;

  /** A store to test. Called before each test. */
  protected abstract IdempotencyStore createStore() throws Exception;

  /** Releases what {@link #createStore()} made. */
  protected void closeStore(IdempotencyStore store) throws Exception {}

  /**
   * Whether the store's purge drops whole partitions of expired records rather than deleting them one by one; such a
   * purge may remove more than its limit of records at once, and does not count them. Default false.
   */
  protected boolean purgeDropsPartitions() {
    return false;
  }

  @BeforeEach
  void setUpStore() throws Exception {
    store = createStore();
    scope = Scope.of("contract-" + UUID.randomUUID());
    now = Instant.ofEpochMilli(System.currentTimeMillis());
  }

  @AfterEach
  void tearDownStore() throws Exception {
    closeStore(store);
  }

  protected RecordKey key(String key) {
    return new RecordKey(scope, Operation.of("POST /things"), IdempotencyKey.of(key));
  }

  protected IdempotencyRecord completed(RecordKey key, Instant at, Duration ttl) {
    StoredResponse response = StoredResponse.of(201,
        Map.of("Content-Type", List.of("application/json"), "Location", List.of("/things/1")),
        "{\"id\":\"thing_1\",\"note\":\"h\u00e9llo \u2603\"}".getBytes(StandardCharsets.UTF_8));
    Fingerprint fingerprint = new Fingerprint(HASH_A, Map.of("amount", HASH_B, "currency", HASH_A));
    return IdempotencyRecord.finished(key, fingerprint, response, RecordState.COMPLETED, at, ttl);
  }

  protected IdempotencyRecord claimed(RecordKey key, Instant at, Duration lease) {
    return IdempotencyRecord.claimed(key, Fingerprint.ofHash(HASH_A), "worker-1", at, lease, Duration.ofHours(24));
  }

  protected boolean insert(IdempotencyRecord record) throws Exception {
    return store.inTransaction(tx -> {
      boolean inserted = store.insert(tx, record);
      if (!inserted) {
        tx.setRollbackOnly();
      }
      return inserted;
    });
  }

  protected IdempotencyRecord find(RecordKey key) throws Exception {
    return store.inTransaction(tx -> store.find(tx, key)).orElse(null);
  }

  protected boolean update(IdempotencyRecord next) throws Exception {
    return store.inTransaction(tx -> store.update(tx, next));
  }

  @Test
  void aStoreWithNothingBoundJoinsNoCallerTransaction() throws Exception {
    assertThat(store.joinsCallerTransaction()).as("outside any transaction").isFalse();
    boolean inOwn = store.inTransaction(tx -> store.joinsCallerTransaction());
    assertThat(inOwn).as("inside a transaction of the store's own").isFalse();
  }

  @Test
  void findsNothingForAnUnknownKey() throws Exception {
    assertThat(find(key("unknown"))).isNull();
  }

  @Test
  void insertedRecordReadsBackFieldForField() throws Exception {
    IdempotencyRecord record = completed(key("k-1"), now, Duration.ofHours(1));

    boolean inserted = insert(record);

    assertThat(inserted).isTrue();
    assertThat(find(record.key())).isEqualTo(record);
  }

  @Test
  void inProgressRecordWithLeaseAndCheckpointReadsBack() throws Exception {
    IdempotencyRecord claimed = claimed(key("k-lease"), now, Duration.ofSeconds(30));
    IdempotencyRecord advanced = claimed.withRecoveryPoint("charge",
        Checkpoint.of(Map.of("payment_id", "pay_1", "quote", "say \"hi\"\n\u00e9")), now.plusSeconds(60), now);

    insert(claimed);
    boolean updated = update(advanced);

    assertThat(updated).isTrue();
    IdempotencyRecord read = find(claimed.key());
    assertThat(read).isEqualTo(advanced);
    assertThat(read.checkpoint().get("quote")).isEqualTo("say \"hi\"\n\u00e9");
    assertThat(read.lockedUntil()).isEqualTo(now.plusSeconds(60));
    assertThat(read.version()).isEqualTo(2);
  }

  @Test
  void theKeyNonceOfAClaimIsKeptThroughEveryWriteAndARecordWithoutOneReadsBackWithout() throws Exception {
    IdempotencyRecord claimed = claimed(key("k-nonce"), now, Duration.ofSeconds(30));
    IdempotencyRecord taken = claimed.withLease("worker-2", now.plusSeconds(60), now);
    IdempotencyRecord advanced = taken.withRecoveryPoint("charge", Checkpoint.empty().with("a", "b"),
        now.plusSeconds(90), now);
    IdempotencyRecord finished = advanced.finish(RecordState.FAILED, StoredResponse.of(422, "refused"), now);
    IdempotencyRecord old = new IdempotencyRecord(key("k-old"), RecordState.IN_PROGRESS, Fingerprint.ofHash(HASH_A),
        null, "create", Checkpoint.empty(), "worker-1", now.plusSeconds(30), 1, now, now, now.plusSeconds(3600));

    insert(claimed);
    IdempotencyRecord readClaimed = find(claimed.key());
    update(taken);
    update(advanced);
    update(finished);
    insert(old);

    assertThat(claimed.keyNonce()).hasSize(IdempotencyRecord.KEY_NONCE_LENGTH).matches("[0-9a-f]+");
    assertThat(readClaimed.keyNonce()).isEqualTo(claimed.keyNonce());
    assertThat(find(claimed.key())).isEqualTo(finished);
    assertThat(find(claimed.key()).derive("charge")).isEqualTo(claimed.derive("charge"));
    assertThat(find(old.key()).keyNonce()).as("a record from before nonces existed").isNull();
    assertThat(find(old.key()).derive("charge")).isEqualTo(old.key().derive("charge"));
  }

  @Test
  void secondInsertOfTheSameKeyIsRefused() throws Exception {
    RecordKey key = key("dup");
    insert(completed(key, now, Duration.ofHours(1)));

    boolean second = insert(claimed(key, now, Duration.ofSeconds(30)));

    assertThat(second).isFalse();
    assertThat(find(key).state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void keysAreCaseSensitiveAndScopedByScopeAndOperation() throws Exception {
    RecordKey lower = key("key-a");
    RecordKey upper = key("KEY-A");
    RecordKey otherScope = new RecordKey(Scope.of(scope.value() + "-other"), lower.operation(), lower.key());
    RecordKey otherOperation = new RecordKey(scope, Operation.of("POST /other"), lower.key());

    boolean[] inserted = {
        insert(completed(lower, now, Duration.ofHours(1))),
        insert(completed(upper, now, Duration.ofHours(1))),
        insert(completed(otherScope, now, Duration.ofHours(1))),
        insert(completed(otherOperation, now, Duration.ofHours(1)))
    };

    assertThat(inserted).containsOnly(true);
    assertThat(find(upper).key()).isEqualTo(upper);
    assertThat(find(otherScope).key()).isEqualTo(otherScope);
  }

  @Test
  void scopesThatDifferOnlyInTrailingSpaceOrCaseAreDistinct() throws Exception {
    RecordKey plain = key("pad");
    RecordKey padded = new RecordKey(Scope.of(scope.value() + " "), plain.operation(), plain.key());
    RecordKey upper = new RecordKey(Scope.of(scope.value().toUpperCase()), plain.operation(), plain.key());

    boolean[] inserted = {
        insert(completed(plain, now, Duration.ofHours(1))),
        insert(completed(padded, now, Duration.ofHours(1))),
        insert(completed(upper, now, Duration.ofHours(1)))
    };

    assertThat(inserted).containsOnly(true);
    assertThat(find(padded).key().scope().value()).endsWith(" ");
  }

  @Test
  void longestKeyAndUnicodeScopeRoundTrip() throws Exception {
    RecordKey key = new RecordKey(Scope.of("t\u00e9nant-\u6771\u4eac-" + UUID.randomUUID()),
        Operation.of("POST /\u00fcber"), IdempotencyKey.of("~".repeat(255)));
    IdempotencyRecord record = completed(key, now, Duration.ofHours(1));

    insert(record);

    assertThat(find(key)).isEqualTo(record);
  }

  @Test
  void emptyAndBinaryBodiesRoundTrip() throws Exception {
    byte[] binary = new byte[256];
    for (int i = 0; i < binary.length; i++) {
      binary[i] = (byte) i;
    }
    IdempotencyRecord empty = IdempotencyRecord.finished(key("empty"), Fingerprint.ofHash(HASH_A),
        StoredResponse.of(204, new byte[0]), RecordState.COMPLETED, now, Duration.ofHours(1));
    IdempotencyRecord bin = IdempotencyRecord.finished(key("binary"), Fingerprint.ofHash(HASH_A),
        StoredResponse.of(200, Map.of("content-type", List.of("application/octet-stream")), binary),
        RecordState.COMPLETED, now, Duration.ofHours(1));

    insert(empty);
    insert(bin);

    assertThat(find(empty.key()).response().bodyLength()).isZero();
    assertThat(find(bin.key()).response().body()).isEqualTo(binary);
  }

  @Test
  void multiValuedHeadersKeepTheirOrder() throws Exception {
    Map<String, List<String>> headers = new LinkedHashMap<>();
    headers.put("X-B", List.of("2", "1"));
    headers.put("X-A", List.of("only"));
    IdempotencyRecord record = IdempotencyRecord.finished(key("headers"), Fingerprint.ofHash(HASH_A),
        StoredResponse.of(200, headers, new byte[] {1}), RecordState.COMPLETED, now, Duration.ofHours(1));

    insert(record);

    assertThat(find(record.key()).response().headers()).containsExactly(
        Map.entry("x-b", List.of("2", "1")), Map.entry("x-a", List.of("only")));
  }

  @Test
  void updateAtTheReadVersionWinsAndAStaleWriterIsFencedOut() throws Exception {
    IdempotencyRecord claimed = claimed(key("fence"), now, Duration.ofSeconds(30));
    insert(claimed);
    IdempotencyRecord takeover = claimed.withLease("worker-2", now.plusSeconds(90), now);

    boolean tookOver = update(takeover);
    boolean staleWrite = update(claimed.finish(RecordState.COMPLETED, StoredResponse.of(200, "stale"), now));

    assertThat(tookOver).isTrue();
    assertThat(staleWrite).isFalse();
    IdempotencyRecord read = find(claimed.key());
    assertThat(read.leaseOwner()).isEqualTo("worker-2");
    assertThat(read.state()).isEqualTo(RecordState.IN_PROGRESS);
  }

  @Test
  void updateToFinalClearsTheLease() throws Exception {
    IdempotencyRecord claimed = claimed(key("finish"), now, Duration.ofSeconds(30));
    insert(claimed);

    update(claimed.finish(RecordState.FAILED, StoredResponse.json(402, "{\"code\":\"declined\"}"), now));

    IdempotencyRecord read = find(claimed.key());
    assertThat(read.state()).isEqualTo(RecordState.FAILED);
    assertThat(read.leaseOwner()).isNull();
    assertThat(read.lockedUntil()).isNull();
    assertThat(read.response().status()).isEqualTo(402);
  }

  @Test
  void deleteNeedsTheCurrentVersion() throws Exception {
    IdempotencyRecord claimed = claimed(key("delete"), now, Duration.ofSeconds(30));
    insert(claimed);

    boolean wrong = store.inTransaction(tx -> store.delete(tx, claimed.key(), 7));
    boolean right = store.inTransaction(tx -> store.delete(tx, claimed.key(), 1));

    assertThat(wrong).isFalse();
    assertThat(right).isTrue();
    assertThat(find(claimed.key())).isNull();
  }

  @Test
  void deleteIfExpiredLeavesLiveRecordsAlone() throws Exception {
    IdempotencyRecord live = completed(key("live"), now, Duration.ofHours(1));
    IdempotencyRecord old = completed(key("old"), now.minus(Duration.ofHours(2)), Duration.ofHours(1));
    insert(live);
    insert(old);

    boolean liveDeleted = store.inTransaction(tx -> store.deleteIfExpired(tx, live.key(), now));
    boolean oldDeleted = store.inTransaction(tx -> store.deleteIfExpired(tx, old.key(), now));

    assertThat(liveDeleted).isFalse();
    assertThat(oldDeleted).isTrue();
    assertThat(find(live.key())).isNotNull();
    assertThat(find(old.key())).isNull();
  }

  @Test
  void findLeaseExpiredReturnsInProgressRecordsWhoseLeaseEndedWhateverTheirExpiry() throws Exception {
    Instant past = now.minus(Duration.ofMinutes(10));
    IdempotencyRecord expiredLease = claimed(key("lease-over"), past, Duration.ofSeconds(30));
    IdempotencyRecord activeLease = claimed(key("lease-on"), now, Duration.ofMinutes(5));
    IdempotencyRecord finished = completed(key("done"), past, Duration.ofHours(1));
    IdempotencyRecord dead = IdempotencyRecord.claimed(key("record-expired"), Fingerprint.ofHash(HASH_A), "w",
        past, Duration.ofSeconds(1), Duration.ofMinutes(1));
    for (IdempotencyRecord r : List.of(expiredLease, activeLease, finished, dead)) {
      insert(r);
    }

    List<IdempotencyRecord> found = store.findLeaseExpired(now, List.of(Operation.of("POST /things")), 10_000);

    List<RecordKey> mine = found.stream().map(IdempotencyRecord::key)
        .filter(k -> k.scope().equals(scope)).toList();
    assertThat(mine).containsExactlyInAnyOrder(expiredLease.key(), dead.key());
  }

  @Test
  void purgeAndDeleteIfExpiredKeepAnInProgressRecordWithCommittedPhases() throws Exception {
    Instant past = now.minus(Duration.ofDays(2));
    IdempotencyRecord stuck = IdempotencyRecord.claimed(key("stuck"), Fingerprint.ofHash(HASH_A), "w", past,
        Duration.ofSeconds(30), Duration.ofHours(1))
        .withRecoveryPoint("charge", Checkpoint.of(Map.of("charge_id", "ch_1")), past.plusSeconds(30), past);
    IdempotencyRecord unstarted = IdempotencyRecord.claimed(key("unstarted"), Fingerprint.ofHash(HASH_A), "w", past,
        Duration.ofSeconds(30), Duration.ofHours(1));
    insert(stuck);
    insert(unstarted);

    boolean deletedStuck = store.inTransaction(tx -> store.deleteIfExpired(tx, stuck.key(), now));
    while (store.purgeExpired(now, 1000) > 0) {
      // drain
    }

    assertThat(deletedStuck).isFalse();
    assertThat(stuck.isExpired(now)).isFalse();
    assertThat(find(stuck.key())).isEqualTo(stuck);
    assertThat(find(unstarted.key())).isNull();
  }

  @Test
  void purgeAndDeleteIfExpiredKeepAClaimTakenOverBeforeItsTtlUntilItsLeaseEnds() throws Exception {
    // claimed two hours ago with a one-hour TTL, its worker died; a retry took it over just before the TTL and still
    // holds it: the record is past its expiry, but its lease runs until after now
    Instant past = now.minus(Duration.ofHours(2));
    IdempotencyRecord[] taken = new IdempotencyRecord[2];
    int i = 0;
    for (Duration retention : List.of(Duration.ZERO, Duration.ofSeconds(10))) {
      IdempotencyRecord claimed = IdempotencyRecord.claimed(key("taken-over-" + i), Fingerprint.ofHash(HASH_A),
          "dead-worker", past, Duration.ofSeconds(30), Duration.ofHours(1), retention);
      insert(claimed);
      taken[i] = claimed.withLease("worker-2", now.plusSeconds(30), claimed.expiresAt().minusSeconds(10));
      assertThat(update(taken[i])).isTrue();
      i++;
    }

    boolean deletedWhileLeased = store.inTransaction(tx -> store.deleteIfExpired(tx, taken[0].key(), now));
    drainPurge(1000);
    IdempotencyRecord afterPurge = find(taken[1].key());
    Instant leaseOver = taken[0].lockedUntil();
    boolean deletedOnceOver = store.inTransaction(tx -> store.deleteIfExpired(tx, taken[0].key(), leaseOver));
    while (store.purgeExpired(leaseOver, 1000) > 0) {
      // drain
    }

    assertThat(taken[0].isGone(now)).isFalse();
    assertThat(taken[0].isGone(leaseOver)).isTrue();
    assertThat(deletedWhileLeased).as("deleted under a live lease").isFalse();
    assertThat(afterPurge).as("purged under a live lease").isEqualTo(taken[1]);
    assertThat(deletedOnceOver).isTrue();
    assertThat(find(taken[0].key())).isNull();
    assertThat(find(taken[1].key())).as("purged once the lease ended").isNull();
  }

  /** A completed record written at {@code at} with a TTL and a retention, with field hashes and a key nonce. */
  protected IdempotencyRecord retained(RecordKey key, Instant at, Duration ttl, Duration retention) {
    IdempotencyRecord r = completed(key, at, ttl);
    return new IdempotencyRecord(r.key(), r.state(), r.fingerprint(), r.response(), "capture",
        Checkpoint.of(Map.of("payment_id", "pay_1")), null, null, 1, at, at, r.expiresAt(),
        IdempotencyRecord.newKeyNonce(), r.expiresAt().plus(retention));
  }

  @Test
  void theRetentionReadsBackAndARecordWithoutOneReadsBackWithout() throws Exception {
    IdempotencyRecord withRetention = retained(key("ret-1"), now, Duration.ofHours(1), Duration.ofDays(30));
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key("ret-2"), Fingerprint.ofHash(HASH_A), "w", now,
        Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofDays(7));
    IdempotencyRecord finished = claimed.finish(RecordState.COMPLETED, StoredResponse.of(201, "done"), now);
    IdempotencyRecord old = completed(key("ret-3"), now, Duration.ofHours(1));

    insert(withRetention);
    insert(claimed);
    update(finished);
    insert(old);

    assertThat(find(withRetention.key())).isEqualTo(withRetention);
    assertThat(find(withRetention.key()).retainUntil()).isEqualTo(withRetention.expiresAt().plus(Duration.ofDays(30)));
    assertThat(find(claimed.key())).isEqualTo(finished);
    assertThat(find(claimed.key()).retainUntil()).isEqualTo(claimed.expiresAt().plus(Duration.ofDays(7)));
    assertThat(find(old.key()).retainUntil()).as("a record from before retention existed").isNull();
  }

  @Test
  void deleteIfExpiredKeepsATombstoneInsideItsRetentionButNotAnUnstartedClaim() throws Exception {
    Instant past = now.minus(Duration.ofHours(2));
    IdempotencyRecord tombstone = retained(key("ret-del"), past, Duration.ofHours(1), Duration.ofDays(1));
    IdempotencyRecord unstarted = IdempotencyRecord.claimed(key("ret-unstarted"), Fingerprint.ofHash(HASH_A), "w",
        past, Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofDays(1));
    insert(tombstone);
    insert(unstarted);

    boolean insideRetention = store.inTransaction(tx -> store.deleteIfExpired(tx, tombstone.key(), now));
    boolean unstartedDeleted = store.inTransaction(tx -> store.deleteIfExpired(tx, unstarted.key(), now));
    boolean afterRetention = store.inTransaction(tx -> store.deleteIfExpired(tx, tombstone.key(),
        tombstone.retainUntil()));

    assertThat(tombstone.isRetained(now)).isTrue();
    assertThat(insideRetention).isFalse();
    assertThat(unstartedDeleted).as("an in-progress record keeps today's rules").isTrue();
    assertThat(afterRetention).isTrue();
    assertThat(find(tombstone.key())).isNull();
  }

  @Test
  void purgeTurnsExpiredRecordsIntoTombstonesOnceAndDeletesThemAfterTheirRetention() throws Exception {
    IdempotencyRecord expired = retained(key("ret-tomb"), now.minus(Duration.ofHours(2)), Duration.ofHours(1),
        Duration.ofDays(30));
    IdempotencyRecord retentionOver = retained(key("ret-over"), now.minus(Duration.ofDays(10)), Duration.ofHours(1),
        Duration.ofDays(1));
    IdempotencyRecord noRetention = retained(key("ret-zero"), now.minus(Duration.ofHours(2)), Duration.ofHours(1),
        Duration.ZERO);
    IdempotencyRecord live = retained(key("ret-live"), now, Duration.ofHours(1), Duration.ofDays(30));
    IdempotencyRecord unstarted = IdempotencyRecord.claimed(key("ret-claim"), Fingerprint.ofHash(HASH_A), "w",
        now.minus(Duration.ofHours(2)), Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofDays(30));
    for (IdempotencyRecord r : List.of(expired, retentionOver, noRetention, live, unstarted)) {
      insert(r);
    }

    drainPurge(1000);
    IdempotencyRecord tombstone = find(expired.key());
    drainPurge(1000);

    assertThat(tombstone).isEqualTo(expired.tombstone(now));
    assertThat(tombstone.response().status()).isEqualTo(201);
    assertThat(tombstone.response().headers()).isEmpty();
    assertThat(tombstone.response().bodyLength()).isZero();
    assertThat(tombstone.fingerprint()).isEqualTo(Fingerprint.ofHash(HASH_A));
    assertThat(tombstone.checkpoint()).isEqualTo(Checkpoint.empty());
    assertThat(tombstone.keyNonce()).isNull();
    assertThat(tombstone.expiresAt()).isEqualTo(expired.expiresAt());
    assertThat(tombstone.retainUntil()).isEqualTo(expired.retainUntil());
    assertThat(tombstone.isRetained(now)).isTrue();
    assertThat(find(expired.key())).as("a tombstone is made once").isEqualTo(tombstone);
    assertThat(find(retentionOver.key())).isNull();
    assertThat(find(noRetention.key())).isNull();
    assertThat(find(unstarted.key())).isNull();
    assertThat(find(live.key())).isEqualTo(live);
  }

  @Test
  void purgeMakesTombstonesInBoundedBatches() throws Exception {
    Instant past = now.minus(Duration.ofDays(2));
    for (int i = 0; i < 5; i++) {
      insert(retained(key("ret-batch-" + i), past, Duration.ofHours(1), Duration.ofDays(30)));
    }

    List<Integer> rounds = drainPurge(2);

    assertThat(rounds).allSatisfy(n -> assertThat(n).isBetween(0, 2));
    for (int i = 0; i < 5; i++) {
      IdempotencyRecord r = find(key("ret-batch-" + i));
      assertThat(r.response().bodyLength()).as("ret-batch-%d", i).isZero();
      assertThat(r.version()).isEqualTo(2);
    }
  }

  /** Purges at {@code now} until a round purges less than {@code limit}; returns each round's count. */
  private List<Integer> drainPurge(int limit) {
    List<Integer> rounds = new ArrayList<>();
    int n;
    do {
      n = store.purgeExpired(now, limit);
      rounds.add(n);
    } while (n >= limit);
    return rounds;
  }

  @Test
  void findLeaseExpiredHonoursTheLimit() throws Exception {
    for (int i = 0; i < 5; i++) {
      insert(claimed(key("limit-" + i), now.minus(Duration.ofMinutes(10)), Duration.ofSeconds(1)));
    }

    List<IdempotencyRecord> found = store.findLeaseExpired(now, List.of(Operation.of("POST /things")), 3);

    assertThat(found).hasSize(3);
  }

  @Test
  void findLeaseExpiredSeesOnlyTheGivenOperations() throws Exception {
    Instant past = now.minus(Duration.ofMinutes(10));
    IdempotencyRecord mine = claimed(key("op-mine"), past, Duration.ofSeconds(1));
    RecordKey foreignKey = new RecordKey(scope, Operation.of("POST /someone-elses"), IdempotencyKey.of("op-foreign"));
    insert(mine);
    insert(claimed(foreignKey, past, Duration.ofSeconds(1)));

    List<RecordKey> none = store.findLeaseExpired(now, List.of(), 100).stream().map(IdempotencyRecord::key).toList();
    List<RecordKey> found = store.findLeaseExpired(now,
        List.of(Operation.of("POST /things"), Operation.of("POST /unused")), 10_000).stream()
        .map(IdempotencyRecord::key).filter(k -> k.scope().equals(scope)).toList();

    assertThat(none).isEmpty();
    assertThat(found).containsExactly(mine.key());
  }

  @Test
  void purgeDeletesExpiredRecordsInBoundedBatches() throws Exception {
    Instant past = now.minus(Duration.ofDays(2));
    for (int i = 0; i < 7; i++) {
      insert(completed(key("expired-" + i), past, Duration.ofHours(1)));
    }
    IdempotencyRecord live = completed(key("live"), now, Duration.ofHours(1));
    insert(live);

    int first = store.purgeExpired(now, 3);
    int total = first;
    int round;
    while ((round = store.purgeExpired(now, 3)) > 0) {
      assertThat(round).isLessThanOrEqualTo(3);
      total += round;
    }

    if (!purgeDropsPartitions()) {
      assertThat(first).isEqualTo(3);
      assertThat(total).isGreaterThanOrEqualTo(7);
    }
    for (int i = 0; i < 7; i++) {
      assertThat(find(key("expired-" + i))).isNull();
    }
    assertThat(find(live.key())).isNotNull();
  }

  @Test
  void listPagesThroughOneStateInKeyOrder() throws Exception {
    for (int i = 0; i < 5; i++) {
      insert(completed(key("page-" + i), now, Duration.ofHours(1)));
    }
    insert(claimed(key("page-x"), now, Duration.ofSeconds(30)));

    List<RecordKey> seen = new ArrayList<>();
    RecordKey after = new RecordKey(scope, Operation.of("POST /things"), IdempotencyKey.of("!"));
    while (true) {
      List<IdempotencyRecord> page = store.admin().list(RecordState.COMPLETED, after, 2);
      List<IdempotencyRecord> mine = page.stream().filter(r -> r.key().scope().equals(scope)).toList();
      mine.forEach(r -> seen.add(r.key()));
      if (mine.size() < 2) {
        break;
      }
      after = page.get(page.size() - 1).key();
    }

    assertThat(seen).extracting(k -> k.key().value())
        .containsExactly("page-0", "page-1", "page-2", "page-3", "page-4");
  }

  @Test
  void evictRemovesARecordWhateverItsState() throws Exception {
    IdempotencyRecord claimed = claimed(key("evict"), now, Duration.ofSeconds(30));
    insert(claimed);

    boolean evicted = store.admin().evict(claimed.key());
    boolean again = store.admin().evict(claimed.key());

    assertThat(evicted).isTrue();
    assertThat(again).isFalse();
    assertThat(find(claimed.key())).isNull();
  }

  @Test
  void concurrentInsertsOfOneKeyHaveExactlyOneWinner() throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 20; round++) {
        RecordKey key = key("race-" + round);
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<Future<Boolean>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          Callable<Boolean> attempt = () -> {
            barrier.await(10, TimeUnit.SECONDS);
            return insert(claimed(key, now, Duration.ofSeconds(30)));
          };
          results.add(pool.submit(attempt));
        }
        int winners = 0;
        for (Future<Boolean> f : results) {
          winners += f.get(30, TimeUnit.SECONDS) ? 1 : 0;
        }
        assertThat(winners).as("winners of round %d", round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void concurrentUpdatesFromOneVersionHaveExactlyOneWinner() throws Exception {
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 50; round++) {
        IdempotencyRecord claimed = claimed(key("update-race-" + round), now, Duration.ofSeconds(30));
        insert(claimed);
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<Future<Boolean>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          IdempotencyRecord takeover = claimed.withLease("worker-" + t, now.plusSeconds(60 + t), now);
          Callable<Boolean> attempt = () -> {
            barrier.await(10, TimeUnit.SECONDS);
            return update(takeover);
          };
          results.add(pool.submit(attempt));
        }
        List<Integer> winners = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          if (results.get(t).get(30, TimeUnit.SECONDS)) {
            winners.add(t);
          }
        }
        assertThat(winners).as("winners of round %d", round).hasSize(1);
        assertThat(find(claimed.key()).leaseOwner()).isEqualTo("worker-" + winners.get(0));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  // ------------------------------------------------------------------ uncertain records and their resolution

  /** A phased record at its recovery point {@code charge}, claimed at {@code at} with a one-hour TTL and a retention. */
  protected IdempotencyRecord atRecoveryPoint(RecordKey key, Instant at) {
    return IdempotencyRecord.claimed(key, Fingerprint.ofHash(HASH_A), "worker-1", at, Duration.ofSeconds(30),
        Duration.ofHours(1), Duration.ofDays(1))
        .withRecoveryPoint("charge", Checkpoint.of(Map.of("payment_id", "pay_1")), at.plusSeconds(30), at);
  }

  /** {@code key}'s record made uncertain at {@code at} (a resume cap of one attempt), inserted and returned. */
  protected IdempotencyRecord insertUncertain(RecordKey key, Instant at) throws Exception {
    IdempotencyRecord uncertain = atRecoveryPoint(key, at)
        .afterFailedResume(OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ZERO, at);
    insert(uncertain);
    return uncertain;
  }

  @Test
  void theResumeCountReadsBackThroughAnUpdate() throws Exception {
    IdempotencyRecord record = atRecoveryPoint(key("resumed"), now);
    insert(record);
    IdempotencyRecord failedOnce = record.afterFailedResume(OperationPolicy.ofDefaults(), Duration.ZERO, now);

    boolean updated = update(failedOnce);

    assertThat(updated).isTrue();
    assertThat(find(record.key())).isEqualTo(failedOnce);
    assertThat(find(record.key()).resumeAttempts()).isEqualTo(1);
    assertThat(find(record.key()).state()).isEqualTo(RecordState.IN_PROGRESS);
  }

  @Test
  void theFieldHashesReadBackAsTheLastUpdateWroteThem() throws Exception {
    Fingerprint claimedWith = new Fingerprint(HASH_A, Map.of("amount", "0123456789abcdef"));
    IdempotencyRecord record = IdempotencyRecord.claimed(key("fields"), claimedWith, "worker-1", now,
        Duration.ofSeconds(30), Duration.ofHours(24));
    insert(record);
    // what a sealing decorator does at completion: the field hashes move into the answer's envelope
    IdempotencyRecord finished = record.finish(RecordState.COMPLETED, completed(record.key(), now, Duration.ofHours(1))
        .response(), now).withFingerprint(Fingerprint.ofHash(HASH_A));

    boolean updated = update(finished);

    assertThat(updated).isTrue();
    assertThat(find(record.key()).fingerprint()).isEqualTo(Fingerprint.ofHash(HASH_A));
    IdempotencyRecord sealedAgain = finished.withLease(null, null, now)
        .withFingerprint(new Fingerprint(HASH_A, Map.of("idem-sealed", "idem:enc:1:c2VhbGVk")));
    assertThat(update(sealedAgain)).isTrue();
    assertThat(find(record.key()).fingerprint()).isEqualTo(sealedAgain.fingerprint());
  }

  @Test
  void anUncertainRecordReadsBackWithItsRecoveryPointCheckpointAndNonceAndNoLease() throws Exception {
    IdempotencyRecord record = atRecoveryPoint(key("uncertain"), now);
    insert(record);
    IdempotencyRecord uncertain = record.afterFailedResume(
        OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ZERO, now);

    boolean updated = update(uncertain);

    IdempotencyRecord read = find(record.key());
    assertThat(updated).isTrue();
    assertThat(read).isEqualTo(uncertain);
    assertThat(read.state()).isEqualTo(RecordState.UNCERTAIN);
    assertThat(read.recoveryPoint()).isEqualTo("charge");
    assertThat(read.checkpoint().values()).containsEntry("payment_id", "pay_1");
    assertThat(read.keyNonce()).isEqualTo(record.keyNonce());
    assertThat(read.leaseOwner()).isNull();
    assertThat(read.lockedUntil()).isNull();
    assertThat(read.resumeAttempts()).isEqualTo(1);
  }

  @Test
  void purgeAndDeleteIfExpiredLeaveUncertainRecordsAndTheCompleterNeverSeesThem() throws Exception {
    Instant past = now.minus(Duration.ofDays(40));
    IdempotencyRecord uncertain = insertUncertain(key("uncertain-old"), past);

    boolean deleted = store.inTransaction(tx -> store.deleteIfExpired(tx, uncertain.key(), now));
    while (store.purgeExpired(now, 1000) > 0) {
      // drain
    }
    List<IdempotencyRecord> leaseExpired =
        store.findLeaseExpired(now, List.of(uncertain.key().operation()), 1000);

    assertThat(deleted).isFalse();
    assertThat(uncertain.isGone(now)).isFalse();
    assertThat(find(uncertain.key())).isEqualTo(uncertain);
    assertThat(leaseExpired).noneMatch(r -> r.key().equals(uncertain.key()));
  }

  @Test
  void findUncertainSeesOnlyTheGivenOperationsInKeyOrderAndPages() throws Exception {
    Operation mine = Operation.of("POST /uncertain-" + UUID.randomUUID());
    Operation other = Operation.of("POST /uncertain-other-" + UUID.randomUUID());
    for (String k : List.of("u-3", "u-1", "u-2")) {
      insertUncertain(new RecordKey(scope, mine, IdempotencyKey.of(k)), now);
    }
    insertUncertain(new RecordKey(scope, other, IdempotencyKey.of("u-0")), now);
    insert(atRecoveryPoint(new RecordKey(scope, mine, IdempotencyKey.of("u-in-progress")), now));

    List<IdempotencyRecord> first = store.findUncertain(List.of(mine), null, 2);
    List<IdempotencyRecord> second = store.findUncertain(List.of(mine), first.get(1).key(), 2);

    assertThat(first).extracting(r -> r.key().key().value()).containsExactly("u-1", "u-2");
    assertThat(second).extracting(r -> r.key().key().value()).containsExactly("u-3");
    assertThat(store.findUncertain(List.of(), null, 10)).isEmpty();
  }

  @Test
  void resolvingCompletesAnUncertainRecordAndKeepsItsAudit() throws Exception {
    IdempotencyRecord uncertain = insertUncertain(key("resolve-complete"), now);
    StoredResponse answer = StoredResponse.json(201, "{\"id\":\"pay_1\",\"status\":\"succeeded\"}");
    Instant at = now.plusSeconds(5);

    Optional<AuditEntry> entry = store.admin().resolve(uncertain.key(), uncertain.version(),
        Resolution.complete(answer, "alice@ops", "provider dashboard shows the charge", at));

    IdempotencyRecord read = find(uncertain.key());
    assertThat(read.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(read.response()).isEqualTo(answer);
    assertThat(read.version()).isEqualTo(uncertain.version() + 1);
    assertThat(entry).contains(new AuditEntry(uncertain.key(), uncertain.version() + 1, at, "alice@ops",
        Resolution.Action.COMPLETE, RecordState.UNCERTAIN, RecordState.COMPLETED,
        "provider dashboard shows the charge"));
    assertThat(store.admin().history(uncertain.key())).containsExactly(entry.get());
  }

  @Test
  void resolvingFailsOrRetriesAnUncertainRecordAndTheAuditKeepsBothInOrder() throws Exception {
    IdempotencyRecord uncertain = insertUncertain(key("resolve-retry"), now);

    Optional<AuditEntry> retried = store.admin().resolve(uncertain.key(), uncertain.version(),
        Resolution.retry("bob", "provider is back", now.plusSeconds(1)));
    IdempotencyRecord back = find(uncertain.key());
    IdempotencyRecord again = back.afterFailedResume(
        OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ZERO, now.plusSeconds(2));
    update(again);
    Optional<AuditEntry> failed = store.admin().resolve(uncertain.key(), again.version(),
        Resolution.fail(StoredResponse.json(402, "{\"code\":\"PAYMENT.declined\"}"), "bob", "declined",
            now.plusSeconds(3)));

    assertThat(back.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(back.resumeAttempts()).isZero();
    assertThat(back.isLeaseExpired(now.plusSeconds(1))).isTrue();
    assertThat(back.recoveryPoint()).isEqualTo("charge");
    assertThat(back.keyNonce()).isEqualTo(uncertain.keyNonce());
    assertThat(find(uncertain.key()).state()).isEqualTo(RecordState.FAILED);
    assertThat(find(uncertain.key()).response().status()).isEqualTo(402);
    assertThat(store.admin().history(uncertain.key()))
        .extracting(AuditEntry::action, AuditEntry::from, AuditEntry::to)
        .containsExactly(
            tuple(Resolution.Action.RETRY, RecordState.UNCERTAIN,
                RecordState.IN_PROGRESS),
            tuple(Resolution.Action.FAIL, RecordState.UNCERTAIN, RecordState.FAILED));
    assertThat(retried).isPresent();
    assertThat(failed).isPresent();
  }

  @Test
  void resolvingAtAnotherVersionOrARecordThatIsNotUncertainChangesNothingAndAuditsNothing() throws Exception {
    IdempotencyRecord uncertain = insertUncertain(key("resolve-stale"), now);
    IdempotencyRecord inProgress = atRecoveryPoint(key("resolve-live"), now);
    insert(inProgress);
    Resolution complete = Resolution.complete(StoredResponse.of(200, "ok"), "carol", "checked", now);

    Optional<AuditEntry> stale = store.admin().resolve(uncertain.key(), uncertain.version() - 1, complete);
    Optional<AuditEntry> live = store.admin().resolve(inProgress.key(), inProgress.version(), complete);
    Optional<AuditEntry> absent = store.admin().resolve(key("resolve-absent"), 1, complete);

    assertThat(stale).isEmpty();
    assertThat(live).isEmpty();
    assertThat(absent).isEmpty();
    assertThat(find(uncertain.key())).isEqualTo(uncertain);
    assertThat(find(inProgress.key())).isEqualTo(inProgress);
    assertThat(store.admin().history(uncertain.key())).isEmpty();
    assertThat(store.admin().history(inProgress.key())).isEmpty();
  }

  @Test
  void theAuditOutlivesAnEvictedRecord() throws Exception {
    IdempotencyRecord uncertain = insertUncertain(key("resolve-evicted"), now);
    store.admin().resolve(uncertain.key(), uncertain.version(),
        Resolution.fail(StoredResponse.of(404, "gone"), "dave", "never reached the provider", now));

    store.admin().evict(uncertain.key());

    assertThat(find(uncertain.key())).isNull();
    assertThat(store.admin().history(uncertain.key())).hasSize(1);
  }

  @Test
  void concurrentResolutionsFromOneVersionHaveExactlyOneWinnerAndOneAuditEntry() throws Exception {
    int threads = 4;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 30; round++) {
        IdempotencyRecord uncertain = insertUncertain(key("resolve-race-" + round), now);
        CyclicBarrier barrier = new CyclicBarrier(threads);
        List<Future<Optional<AuditEntry>>> results = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          Resolution resolution = t % 2 == 0
              ? Resolution.complete(StoredResponse.of(200, "by " + t), "worker-" + t, "race", now)
              : Resolution.fail(StoredResponse.of(400, "by " + t), "worker-" + t, "race", now);
          Callable<Optional<AuditEntry>> attempt = () -> {
            barrier.await(10, TimeUnit.SECONDS);
            return store.admin().resolve(uncertain.key(), uncertain.version(), resolution);
          };
          results.add(pool.submit(attempt));
        }
        List<AuditEntry> winners = new ArrayList<>();
        for (Future<Optional<AuditEntry>> result : results) {
          result.get(30, TimeUnit.SECONDS).ifPresent(winners::add);
        }
        assertThat(winners).as("winners of round %d", round).hasSize(1);
        assertThat(store.admin().history(uncertain.key())).containsExactlyElementsOf(winners);
        assertThat(find(uncertain.key()).state()).isEqualTo(winners.get(0).to());
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
