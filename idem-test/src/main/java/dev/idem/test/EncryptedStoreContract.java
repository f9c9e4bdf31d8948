package dev.idem.test;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.AuditEntry;
import dev.idem.core.Checkpoint;
import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.Scope;
import dev.idem.core.StoredResponse;
import dev.idem.core.crypto.DecryptionException;
import dev.idem.core.crypto.EncryptedIdempotencyStore;
import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import dev.idem.core.crypto.RecordReencryption;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.IdemListener;
import dev.idem.core.spi.IdempotencyStore;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract of answers sealed at rest ({@link EncryptedIdempotencyStore}) over a store: what reaches the store is
 * sealed, a sealed answer opens only in its own record, a wrong or tampered one fails loudly and is never run again,
 * and rotation re-seals under the new key while claims go on. Extend it and implement {@link #createStore()} (the
 * plain store underneath); each test uses a fresh random scope.
 */
public abstract class EncryptedStoreContract {
  private static final String SECRET = "card 4242424242424242 cvc 123";
  private static final Fingerprint FIELDS = new Fingerprint("a".repeat(64),
      Map.of("amount", "00000000000000a5", "card_number", "0123456789abcdef"));
  private static final Fingerprint OTHER_CARD = new Fingerprint("d".repeat(64),
      Map.of("amount", "00000000000000a5", "card_number", "fedcba9876543210"));

  protected IdempotencyStore raw;
  private Scope scope;
  private Instant now;
  private final List<DecryptionException> unreadable = new CopyOnWriteArrayList<>();
  private final IdemListener listener = new IdemListener() {
    @Override
    public void onRecordUnreadable(String store, RecordKey key, DecryptionException failure) {
      unreadable.add(failure);
    }
  };

  /** The plain store to seal answers over. Called before each test. */
  protected abstract IdempotencyStore createStore() throws Exception;

  /** Releases what {@link #createStore()} made. */
  protected void closeStore(IdempotencyStore store) throws Exception {}

  @BeforeEach
  void setUpStore() throws Exception {
    raw = createStore();
    scope = Scope.of("sealed-" + UUID.randomUUID());
    now = Instant.ofEpochMilli(System.currentTimeMillis());
  }

  @AfterEach
  void tearDownStore() throws Exception {
    closeStore(raw);
  }

  @Test
  void answersReachTheStoreSealedAndReadBackWhole() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    IdempotencyRecord record = completed(key("k-round-trip"), 201);

    insert(sealed, record);

    IdempotencyRecord stored = raw.find(record.key()).orElseThrow();
    assertThat(stored.response().status()).isEqualTo(201);
    assertThat(stored.response().headers()).containsOnlyKeys(EncryptedIdempotencyStore.SEALED_HEADER);
    assertThat(new String(stored.response().body(), UTF_8)).doesNotContain("4242424242424242", "thing_1");
    assertThat(Encryption.keyIdOf(stored.response().body())).isEqualTo("k1");
    assertThat(sealed.find(record.key())).contains(record);
    Optional<IdempotencyRecord> inTx = sealed.inTransaction(tx -> sealed.find(tx, record.key()));
    assertThat(inTx).contains(record);
  }

  @Test
  void anAnswerWrittenByTheLastUpdateOfATransactionIsSealedToo() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key("k-update-last"), Fingerprint.ofHash("a".repeat(64)),
        "worker-1", now, Duration.ofSeconds(30), Duration.ofHours(1));
    IdempotencyRecord finished = claimed.finish(RecordState.COMPLETED, completed(claimed.key(), 201).response(), now);
    insert(sealed, claimed);

    boolean updated = sealed.inTransaction(tx -> sealed.updateLast(tx, finished));

    assertThat(updated).isTrue();
    IdempotencyRecord stored = raw.find(claimed.key()).orElseThrow();
    assertThat(stored.response().headers()).containsOnlyKeys(EncryptedIdempotencyStore.SEALED_HEADER);
    assertThat(new String(stored.response().body(), UTF_8)).doesNotContain("4242424242424242", "thing_1");
    assertThat(sealed.find(claimed.key()).orElseThrow().response()).isEqualTo(finished.response());
  }

  @Test
  void fieldHashesReachTheStoreSealedInTheAnswersEnvelope() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    IdempotencyRecord record = completed(key("k-fields"), 201).withFingerprint(FIELDS);

    insert(sealed, record);

    IdempotencyRecord stored = raw.find(record.key()).orElseThrow();
    assertThat(stored.fingerprint()).as("the overall hash stays readable, the fields go")
        .isEqualTo(Fingerprint.ofHash(FIELDS.hash()));
    assertThat(stored.toString()).doesNotContain("card_number", FIELDS.fieldHashes().get("card_number"));
    assertThat(sealed.find(record.key())).contains(record);
    assertThat(sealed.find(record.key()).orElseThrow().fingerprint().differingFields(OTHER_CARD))
        .containsExactly("card_number");
  }

  @Test
  void theFieldHashesOfAClaimAreSealedAndMoveIntoTheAnswerAtCompletion() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key("k-claim-fields"), FIELDS, "worker-1", now,
        Duration.ofSeconds(30), Duration.ofHours(1));
    insert(sealed, claimed);

    IdempotencyRecord inProgress = raw.find(claimed.key()).orElseThrow();
    assertThat(inProgress.fingerprint().fieldHashes()).containsOnlyKeys(EncryptedIdempotencyStore.SEALED_FIELDS);
    assertThat(inProgress.toString()).doesNotContain("card_number", FIELDS.fieldHashes().get("card_number"));
    assertThat(Encryption.keyIdOf(inProgress.fingerprint().fieldHashes().get(EncryptedIdempotencyStore.SEALED_FIELDS)))
        .isEqualTo("k1");
    assertThat(sealed.find(claimed.key())).contains(claimed);

    IdempotencyRecord finished = claimed.finish(RecordState.COMPLETED, completed(claimed.key(), 201).response(), now);
    boolean updated = sealed.inTransaction(tx -> sealed.updateLast(tx, finished));

    assertThat(updated).isTrue();
    IdempotencyRecord stored = raw.find(claimed.key()).orElseThrow();
    assertThat(stored.fingerprint()).isEqualTo(Fingerprint.ofHash(FIELDS.hash()));
    assertThat(sealed.find(claimed.key())).contains(finished);
  }

  @Test
  void sealedFieldHashesMovedToAnotherRecordOrToAnotherFormatDoNotOpen() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    IdempotencyRecord a = IdempotencyRecord.claimed(key("k-fields-a"), FIELDS, "worker-1", now,
        Duration.ofSeconds(30), Duration.ofHours(1));
    IdempotencyRecord b = IdempotencyRecord.claimed(key("k-fields-b"), FIELDS, "worker-1", now,
        Duration.ofSeconds(30), Duration.ofHours(1));
    insert(sealed, a);
    insert(sealed, b);
    insert(sealed, completed(key("k-fields-c"), 201).withFingerprint(FIELDS));
    IdempotencyRecord storedB = raw.find(b.key()).orElseThrow();
    IdempotencyRecord storedC = raw.find(key("k-fields-c")).orElseThrow();

    rewrite(storedB.withLease("worker-1", now.plusSeconds(30), now)
        .withFingerprint(raw.find(a.key()).orElseThrow().fingerprint()));
    StoredResponse asAnswerOnly = StoredResponse.of(201, Map.of(EncryptedIdempotencyStore.SEALED_HEADER,
        List.of("1")), storedC.response().body());
    rewrite(storedC.withLease(null, null, now).withResponse(asAnswerOnly));
    // the other way: an answer sealed alone, marked as holding field hashes
    insert(sealed, completed(key("k-fields-d"), 201));
    IdempotencyRecord storedD = raw.find(key("k-fields-d")).orElseThrow();
    rewrite(storedD.withLease(null, null, now).withResponse(StoredResponse.of(201,
        Map.of(EncryptedIdempotencyStore.SEALED_HEADER, List.of("2")), storedD.response().body())));
    // an answer with its field hashes, moved to another record
    insert(sealed, completed(key("k-fields-e"), 201).withFingerprint(FIELDS));
    insert(sealed, completed(key("k-fields-f"), 201).withFingerprint(FIELDS));
    IdempotencyRecord storedF = raw.find(key("k-fields-f")).orElseThrow();
    rewrite(storedF.withLease(null, null, now).withResponse(raw.find(key("k-fields-e")).orElseThrow().response()));

    for (String k : List.of("k-fields-b", "k-fields-c", "k-fields-d", "k-fields-f")) {
      assertThatThrownBy(() -> sealed.find(key(k))).as(k).isInstanceOfSatisfying(DecryptionException.class,
          e -> assertThat(e.reason()).isEqualTo(DecryptionException.Reason.TAMPERED));
    }
    assertThat(sealed.find(a.key())).contains(a);
    assertThat(sealed.find(key("k-fields-e")).orElseThrow().fingerprint()).isEqualTo(FIELDS);
  }

  @Test
  void withFieldHashSealingOffRecordsKeepTheFormatOfAVersionThatSealedAnswersOnly() throws Exception {
    EncryptedIdempotencyStore during = EncryptedIdempotencyStore.wrap(raw, Encryption.with(Keyring.generate("k1")),
        listener, false);
    IdempotencyRecord record = completed(key("k-rolling"), 201).withFingerprint(FIELDS);
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key("k-rolling-claim"), FIELDS, "worker-1", now,
        Duration.ofSeconds(30), Duration.ofHours(1));

    insert(during, record);
    insert(during, claimed);

    IdempotencyRecord stored = raw.find(record.key()).orElseThrow();
    assertThat(stored.response().headers()).containsEntry(EncryptedIdempotencyStore.SEALED_HEADER, List.of("1"));
    assertThat(stored.fingerprint()).isEqualTo(FIELDS);
    assertThat(raw.find(claimed.key()).orElseThrow().fingerprint()).isEqualTo(FIELDS);
    assertThat(during.find(record.key())).contains(record);
    RecordReencryption.Pass walked = RecordReencryption.of(during, Clock.systemUTC()).toTheEnd(1000);
    assertThat(walked.resealed() + walked.sealed() + walked.inProgress()).as("nothing for the walk to do").isZero();
  }

  @Test
  void fieldHashesWrittenInPlaintextStillReadAndAreSealedByTheWalk() throws Exception {
    Keyring k1 = Keyring.generate("k1");
    // as a version that sealed only answers wrote them: the answer sealed, the field hashes in the clear
    EncryptedIdempotencyStore answersOnly = sealing(k1);
    IdempotencyRecord record = completed(key("k-plain-fields"), 201);
    insert(answersOnly, record);
    IdempotencyRecord stored = raw.find(record.key()).orElseThrow();
    rewrite(stored.withLease(null, null, now).withFingerprint(FIELDS));
    EncryptedIdempotencyStore sealed = sealing(k1);
    assertThat(sealed.find(record.key()).orElseThrow().fingerprint()).isEqualTo(FIELDS);

    RecordReencryption.Pass walked = RecordReencryption.of(sealed, Clock.systemUTC()).toTheEnd(200);

    assertThat(walked.resealed()).isEqualTo(1);
    IdempotencyRecord after = raw.find(record.key()).orElseThrow();
    assertThat(after.fingerprint()).isEqualTo(Fingerprint.ofHash(FIELDS.hash()));
    assertThat(sealed.find(record.key()).orElseThrow().fingerprint()).isEqualTo(FIELDS);
    assertThat(sealed.find(record.key()).orElseThrow().response()).isEqualTo(record.response());
  }

  @Test
  void theWalkSealsThePlaintextFieldHashesOfAnUncertainRecordAndLeavesThoseInProgressToTheirWorker()
      throws Exception {
    Keyring k1 = Keyring.generate("k1");
    EncryptedIdempotencyStore answersOnly = EncryptedIdempotencyStore.wrap(raw, Encryption.with(k1), listener, false);
    Checkpoint values = Checkpoint.of(Map.of("charge_id", "ch_7"));
    IdempotencyRecord working = IdempotencyRecord.claimed(key("k-working"), FIELDS, "worker-1", now,
        Duration.ofMinutes(5), Duration.ofHours(1));
    insert(answersOnly, working);
    boolean advanced = answersOnly.inTransaction(tx -> answersOnly.update(tx,
        working.withRecoveryPoint("charge", values, now.plusSeconds(300), now)));
    IdempotencyRecord claimed = expiredClaim("k-fields-uncertain").withFingerprint(FIELDS);
    insert(answersOnly, claimed);
    IdempotencyRecord atPoint = claimed.withRecoveryPoint("charge", values, now.minusSeconds(30), now.minusSeconds(59));
    IdempotencyRecord uncertain = atPoint.afterFailedResume(
        OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ofSeconds(1), now);
    boolean atPointOk = answersOnly.inTransaction(tx -> answersOnly.update(tx, atPoint));
    boolean uncertainOk = answersOnly.inTransaction(tx -> answersOnly.update(tx, uncertain));
    assertThat(advanced && atPointOk && uncertainOk).isTrue();
    assertThat(raw.find(claimed.key()).orElseThrow().fingerprint()).isEqualTo(FIELDS);

    RecordReencryption.Pass walked = RecordReencryption.of(sealing(k1), Clock.systemUTC()).toTheEnd(200);

    assertThat(walked.resealed()).isEqualTo(1);
    assertThat(walked.inProgress()).as("nothing under an older key: the worker seals the field hashes next").isZero();
    IdempotencyRecord stored = raw.find(claimed.key()).orElseThrow();
    assertThat(stored.fingerprint().fieldHashes()).containsOnlyKeys(EncryptedIdempotencyStore.SEALED_FIELDS);
    IdempotencyRecord opened = sealing(k1).find(claimed.key()).orElseThrow();
    assertThat(opened.state()).isEqualTo(RecordState.UNCERTAIN);
    assertThat(opened.fingerprint()).isEqualTo(FIELDS);
    assertThat(opened.checkpoint()).isEqualTo(values);
    assertThat(raw.find(working.key()).orElseThrow().fingerprint()).isEqualTo(FIELDS);
  }

  @Test
  void aMismatchNamesTheFieldsThatDifferWhileNoneReachesTheStore() throws Exception {
    Idem idem = Idem.builder().name("sealed-fields").store(raw).encryption(Encryption.with(Keyring.generate("k1")))
        .listener(listener).build();
    byte[] first = "{\"amount\":5,\"card_number\":\"4242424242424242\"}".getBytes(UTF_8);
    byte[] other = "{\"amount\":5,\"card_number\":\"4000000000000002\"}".getBytes(UTF_8);
    for (String mode : raw.transactional() ? List.of("atomic", "leased") : List.of("leased")) {
      RecordKey key = key("k-mismatch-" + mode);
      Execution stored = run(idem, mode, IdempotentRequest.of(key, first, "application/json"));
      IdempotencyRecord raw = this.raw.find(key).orElseThrow();

      Execution mismatch = run(idem, mode, IdempotentRequest.of(key, other, "application/json"));

      assertThat(stored.outcome()).isEqualTo(Execution.Outcome.STORED);
      assertThat(raw.fingerprint().fieldHashes()).as(mode).isEmpty();
      assertThat(mismatch.outcome()).as(mode).isEqualTo(Execution.Outcome.PAYLOAD_MISMATCH);
      assertThat(mismatch.differingFields()).as(mode).containsExactly("card_number");
    }
  }

  private static Execution run(Idem idem, String mode, IdempotentRequest request) throws Exception {
    return mode.equals("atomic")
        ? idem.atomic(request, tx -> StoredResponse.json(201, "{\"id\":\"pay_1\"}"))
        : idem.leased(request, k -> StoredResponse.json(201, "{\"id\":\"pay_1\"}"));
  }

  @Test
  void checkpointValuesReachTheStoreSealedAndReadBackWhole() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key("k-checkpoint"), Fingerprint.ofHash("a".repeat(64)),
        "worker-1", now, Duration.ofSeconds(30), Duration.ofHours(1));
    Checkpoint values = Checkpoint.of(Map.of("account_id", "acct_" + SECRET, "note", "x".repeat(4096),
        "charge_id", "ch_1:2"));
    IdempotencyRecord advanced = claimed.withRecoveryPoint("charge", values, now.minusSeconds(1), now);
    insert(sealed, claimed);

    boolean updated = sealed.inTransaction(tx -> sealed.update(tx, advanced));

    assertThat(updated).isTrue();
    IdempotencyRecord stored = raw.find(claimed.key()).orElseThrow();
    assertThat(stored.checkpoint().values().keySet())
        .allMatch(name -> name.startsWith(EncryptedIdempotencyStore.SEALED_CHECKPOINT));
    assertThat(stored.checkpoint().values().toString()).doesNotContain("4242424242424242", "ch_1");
    assertThat(sealed.find(claimed.key()).orElseThrow().checkpoint()).isEqualTo(values);
    assertThat(sealed.findLeaseExpired(now, List.of(claimed.key().operation()), 1000))
        .filteredOn(r -> r.key().equals(claimed.key())).singleElement()
        .satisfies(r -> assertThat(r.checkpoint()).isEqualTo(values));
  }

  @Test
  void aRecordThatDoesNotOpenDoesNotHideTheOthersFromTheCompleter() throws Exception {
    EncryptedIdempotencyStore other = sealing(Keyring.generate("k1"));
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    IdempotencyRecord foreign = expiredClaim("k-foreign");
    IdempotencyRecord ours = expiredClaim("k-ours");
    insert(other, foreign);
    insert(sealed, ours);
    IdempotencyRecord foreignAdvanced = foreign.withRecoveryPoint("charge", Checkpoint.of(Map.of("a", "b")),
        now.minusSeconds(30), now.minusSeconds(59));
    IdempotencyRecord oursAdvanced = ours.withRecoveryPoint("charge", Checkpoint.of(Map.of("c", "d")),
        now.minusSeconds(30), now.minusSeconds(59));
    boolean foreignUpdated = other.inTransaction(tx -> other.update(tx, foreignAdvanced));
    boolean oursUpdated = sealed.inTransaction(tx -> sealed.update(tx, oursAdvanced));
    assertThat(foreignUpdated && oursUpdated).isTrue();

    List<IdempotencyRecord> expired = sealed.findLeaseExpired(now, List.of(ours.key().operation()), 1000);

    assertThat(expired).extracting(IdempotencyRecord::key).contains(ours.key()).doesNotContain(foreign.key());
    assertThat(unreadable).extracting(DecryptionException::reason).contains(DecryptionException.Reason.TAMPERED);
    assertThat(raw.find(foreign.key()).orElseThrow().state()).as("it can never be resumed: it waits for an operator")
        .isEqualTo(RecordState.UNCERTAIN);
    assertThat(sealed.findLeaseExpired(now, List.of(ours.key().operation()), 1000))
        .extracting(IdempotencyRecord::key).doesNotContain(foreign.key());
  }

  private IdempotencyRecord expiredClaim(String key) {
    return IdempotencyRecord.claimed(key(key), Fingerprint.ofHash("a".repeat(64)), "worker-1", now.minusSeconds(60),
        Duration.ofSeconds(1), Duration.ofHours(1));
  }

  @Test
  void aSealedAnswerMovedToAnotherRecordDoesNotOpen() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    insert(sealed, completed(key("k-a"), 201));
    insert(sealed, completed(key("k-b"), 201));
    IdempotencyRecord a = raw.find(key("k-a")).orElseThrow();
    IdempotencyRecord b = raw.find(key("k-b")).orElseThrow();

    rewrite(b.withLease(null, null, now).withResponse(a.response()));

    assertThatThrownBy(() -> sealed.find(key("k-b")))
        .isInstanceOfSatisfying(DecryptionException.class,
            e -> assertThat(e.reason()).isEqualTo(DecryptionException.Reason.TAMPERED))
        .hasMessageContaining("k-b").hasMessageContaining("Nothing was run again");
    assertThat(unreadable).hasSize(1);
    assertThat(sealed.find(key("k-a"))).isPresent();
  }

  @Test
  void aSealedAnswerGivenAnotherStatusDoesNotOpen() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    insert(sealed, completed(key("k-status"), 402));
    IdempotencyRecord stored = raw.find(key("k-status")).orElseThrow();

    rewrite(stored.withLease(null, null, now).withResponse(
        StoredResponse.of(200, stored.response().headers(), stored.response().body())));

    assertThatThrownBy(() -> sealed.find(key("k-status"))).isInstanceOfSatisfying(DecryptionException.class,
        e -> assertThat(e.reason()).isEqualTo(DecryptionException.Reason.TAMPERED));
  }

  @Test
  void everyFlippedByteOfASealedAnswerIsRefused() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    insert(sealed, completed(key("k-flip"), 201));
    IdempotencyRecord stored = raw.find(key("k-flip")).orElseThrow();
    byte[] body = stored.response().body();
    IdempotencyRecord current = stored;

    for (int i = 0; i < body.length; i += Math.max(1, body.length / 40)) {
      byte[] flipped = body.clone();
      flipped[i] ^= 0x01;
      current = current.withLease(null, null, now).withResponse(
          StoredResponse.of(201, stored.response().headers(), flipped));
      rewrite(current);

      assertThatThrownBy(() -> sealed.find(key("k-flip"))).as("byte %d", i)
          .isInstanceOf(DecryptionException.class);
    }
  }

  @Test
  void anAnswerSealedUnderAKeyTheKeyringNoLongerHoldsIsRefusedAsUnknownKey() throws Exception {
    Keyring k1 = Keyring.generate("k1");
    insert(sealing(k1), completed(key("k-unknown"), 201));
    EncryptedIdempotencyStore other = sealing(Keyring.generate("k2"));

    assertThatThrownBy(() -> other.find(key("k-unknown"))).isInstanceOfSatisfying(DecryptionException.class,
        e -> {
          assertThat(e.reason()).isEqualTo(DecryptionException.Reason.UNKNOWN_KEY);
          assertThat(e.keyId()).isEqualTo("k1");
        });
    assertThat(unreadable).extracting(DecryptionException::reason)
        .containsExactly(DecryptionException.Reason.UNKNOWN_KEY);
  }

  @Test
  void aTamperedAnswerFailsEveryRetryAndIsNeverRunAgain() throws Exception {
    Idem idem = Idem.builder().name("sealed").store(raw).encryption(Encryption.with(Keyring.generate("k1")))
        .listener(listener).build();
    AtomicInteger runs = new AtomicInteger();
    IdempotentRequest request = IdempotentRequest.of(key("k-never-again"), "{\"amount\":5}".getBytes(UTF_8),
        "application/json");
    Execution first = idem.leased(request, k -> {
      runs.incrementAndGet();
      return StoredResponse.json(201, "{\"id\":\"pay_1\"}");
    });
    assertThat(first.outcome()).isEqualTo(Execution.Outcome.STORED);
    IdempotencyRecord stored = raw.find(key("k-never-again")).orElseThrow();
    byte[] body = stored.response().body();
    body[body.length - 1] ^= 0x01;
    rewrite(stored.withLease(null, null, now).withResponse(
        StoredResponse.of(201, stored.response().headers(), body)));

    for (int i = 0; i < 3; i++) {
      assertThatThrownBy(() -> idem.leased(request, k -> {
        runs.incrementAndGet();
        return StoredResponse.json(201, "{\"id\":\"pay_2\"}");
      })).satisfies(e -> assertThat(rootDecryption(e)).isNotNull()
          .extracting(DecryptionException::reason).isEqualTo(DecryptionException.Reason.TAMPERED));
    }

    assertThat(runs).hasValue(1);
    assertThat(unreadable).hasSize(3);
  }

  @Test
  void rotationReSealsEveryAnswerUnderTheNewKeyWhileClaimsGoOn() throws Exception {
    Keyring k1 = Keyring.generate("k1");
    EncryptedIdempotencyStore before = sealing(k1);
    int old = 120;
    for (int i = 0; i < old; i++) {
      insert(before, completed(key("old-" + i), 201));
    }
    Keyring k2 = k1.withNewKey("k2");
    EncryptedIdempotencyStore after = sealing(k2);
    AtomicBoolean walking = new AtomicBoolean(true);
    List<RecordKey> written = new CopyOnWriteArrayList<>();
    CountDownLatch started = new CountDownLatch(2);
    ExecutorService pool = Executors.newFixedThreadPool(2);
    List<Future<?>> writers = new ArrayList<>();
    for (int w = 0; w < 2; w++) {
      int writer = w;
      writers.add(pool.submit(() -> {
        started.countDown();
        for (int i = 0; walking.get() && i < 2_000; i++) {
          RecordKey k = key("new-" + writer + "-" + i);
          insert(after, completed(k, 201));
          assertThat(after.find(key("old-" + (i % old)))).isPresent();
          written.add(k);
        }
        return null;
      }));
    }
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    int resealed = RecordReencryption.of(after, Clock.systemUTC()).toTheEnd(25).resealed();
    walking.set(false);
    for (Future<?> writer : writers) {
      writer.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();

    assertThat(resealed).isGreaterThanOrEqualTo(old);
    EncryptedIdempotencyStore retired = sealing(k2.without("k1"));
    for (int i = 0; i < old; i++) {
      IdempotencyRecord stored = raw.find(key("old-" + i)).orElseThrow();
      assertThat(Encryption.keyIdOf(stored.response().body())).isEqualTo("k2");
      assertThat(retired.find(key("old-" + i)).orElseThrow().response().bodyAsString()).contains("thing_1");
    }
    assertThat(written).isNotEmpty();
    for (RecordKey k : written) {
      assertThat(retired.find(k)).isPresent();
    }
  }

  @Test
  void rotationReSealsTheCheckpointOfAnUncertainRecord() throws Exception {
    Keyring k1 = Keyring.generate("k1");
    EncryptedIdempotencyStore before = sealing(k1);
    IdempotencyRecord claimed = expiredClaim("k-uncertain");
    insert(before, claimed);
    // a checkpoint of several sealed chunks
    IdempotencyRecord advanced = claimed.withRecoveryPoint("charge", Checkpoint.of(Map.of("charge_id", "ch_9",
        "note", "n".repeat(4096), "more", "m".repeat(4096))), now.minusSeconds(30), now.minusSeconds(59));
    IdempotencyRecord uncertain = advanced.afterFailedResume(
        OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ofSeconds(1), now);
    assertThat(uncertain.state()).isEqualTo(RecordState.UNCERTAIN);
    boolean advancedOk = before.inTransaction(tx -> before.update(tx, advanced));
    boolean uncertainOk = before.inTransaction(tx -> before.update(tx, uncertain));
    assertThat(advancedOk && uncertainOk).isTrue();
    Keyring k2 = k1.withNewKey("k2");

    RecordReencryption.of(sealing(k2), Clock.systemUTC()).toTheEnd(500);

    IdempotencyRecord stored = raw.find(claimed.key()).orElseThrow();
    assertThat(stored.checkpoint().get(EncryptedIdempotencyStore.SEALED_CHECKPOINT + 1)).isNotNull();
    StringBuilder sealedText = new StringBuilder();
    for (int i = 0; stored.checkpoint().get(EncryptedIdempotencyStore.SEALED_CHECKPOINT + i) != null; i++) {
      sealedText.append(stored.checkpoint().get(EncryptedIdempotencyStore.SEALED_CHECKPOINT + i));
    }
    assertThat(Encryption.keyIdOf(sealedText.toString())).isEqualTo("k2");
    IdempotencyRecord opened = sealing(k2.without("k1")).find(claimed.key()).orElseThrow();
    assertThat(opened.state()).isEqualTo(RecordState.UNCERTAIN);
    assertThat(opened.checkpoint().get("charge_id")).isEqualTo("ch_9");
  }

  @Test
  void rotationKeepsWhenARecordWasLastWrittenSoItsAnswerAndItsUncertainSinceStayAsTheyWere() throws Exception {
    Keyring k1 = Keyring.generate("k1");
    EncryptedIdempotencyStore before = sealing(k1);
    Fingerprint fingerprint = Fingerprint.ofHash("a".repeat(64));
    IdempotencyRecord done = IdempotencyRecord.finished(key("k-done"), fingerprint,
        completed(key("k-done"), 201).response(), RecordState.COMPLETED, now.minus(Duration.ofMinutes(50)),
        Duration.ofHours(1), Duration.ofDays(30));
    insert(before, done);
    IdempotencyRecord claimed = expiredClaim("k-uncertain-since");
    insert(before, claimed);
    IdempotencyRecord advanced = claimed.withRecoveryPoint("charge", Checkpoint.of(Map.of("charge_id", "ch_7")),
        now.minusSeconds(30), now.minusSeconds(59));
    IdempotencyRecord uncertain = advanced.afterFailedResume(
        OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ofSeconds(1),
        now.minusSeconds(40));
    boolean advancedOk = before.inTransaction(tx -> before.update(tx, advanced));
    boolean uncertainOk = before.inTransaction(tx -> before.update(tx, uncertain));
    assertThat(advancedOk && uncertainOk).isTrue();
    Keyring k2 = k1.withNewKey("k2");
    // the walk runs on a clock a little ahead of the nodes that answer retries: at the answer's expiry
    Clock walkClock = Clock.fixed(done.expiresAt(), ZoneOffset.UTC);

    RecordReencryption.Pass walked = RecordReencryption.of(sealing(k2), walkClock).toTheEnd(500);

    IdempotencyRecord doneAfter = raw.find(done.key()).orElseThrow();
    IdempotencyRecord uncertainAfter = raw.find(uncertain.key()).orElseThrow();
    assertThat(walked.resealed()).isGreaterThanOrEqualTo(2);
    assertThat(Encryption.keyIdOf(doneAfter.response().body())).isEqualTo("k2");
    assertThat(doneAfter.version()).isEqualTo(done.version() + 1);
    assertThat(doneAfter.updatedAt()).isEqualTo(done.updatedAt());
    assertThat(uncertainAfter.version()).isEqualTo(uncertain.version() + 1);
    assertThat(uncertainAfter.updatedAt()).isEqualTo(uncertain.updatedAt());
    Idem idem = Idem.builder().name("resealed").store(raw).encryption(Encryption.with(k2.without("k1")))
        .clock(Clock.fixed(done.expiresAt().minusSeconds(1), ZoneOffset.UTC)).build();
    Execution replay = idem.leased(IdempotentRequest.withFingerprint(done.key(), fingerprint),
        k -> StoredResponse.of(500, "must not run"));
    Execution stillUncertain = idem.leased(IdempotentRequest.withFingerprint(uncertain.key(), fingerprint),
        k -> StoredResponse.of(500, "must not run"));
    assertThat(replay.outcome()).isEqualTo(Execution.Outcome.REPLAYED);
    assertThat(replay.response().bodyAsString()).contains("thing_1");
    assertThat(stillUncertain.outcome()).isEqualTo(Execution.Outcome.UNCERTAIN);
    assertThat(stillUncertain.expiredAt()).as("uncertain since").isEqualTo(uncertain.updatedAt());
  }

  @Test
  void answersKeptBeforeEncryptionWasOnStillReadAndCanBeSealedLater() throws Exception {
    IdempotencyRecord plain = completed(key("k-plain"), 201);
    insert(raw, plain);
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));

    assertThat(sealed.find(plain.key())).contains(plain);
    RecordReencryption.of(sealed, Clock.systemUTC()).sealPlaintext(true).toTheEnd(200);

    IdempotencyRecord stored = raw.find(plain.key()).orElseThrow();
    assertThat(EncryptedIdempotencyStore.isSealed(stored)).isTrue();
    assertThat(sealed.find(plain.key()).orElseThrow().response().bodyAsString()).isEqualTo(
        plain.response().bodyAsString());
  }

  @Test
  void anUncertainRecordIsFoundOpenedAndAnOperatorsAnswerToItIsSealed() throws Exception {
    EncryptedIdempotencyStore sealed = sealing(Keyring.generate("k1"));
    Operation operation = Operation.of("POST /sealed-uncertain-" + UUID.randomUUID());
    RecordKey key = new RecordKey(scope, operation, IdempotencyKey.of("k-uncertain"));
    Checkpoint values = Checkpoint.of(Map.of("account_id", "acct_" + SECRET));
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key, Fingerprint.ofHash("a".repeat(64)), "worker-1", now,
        Duration.ofSeconds(30), Duration.ofHours(1));
    IdempotencyRecord uncertain = claimed.withRecoveryPoint("charge", values, now, now)
        .afterFailedResume(OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ZERO, now);
    insert(sealed, claimed);
    sealed.inTransaction(tx -> sealed.update(tx, claimed.withRecoveryPoint("charge", values, now, now)));
    sealed.inTransaction(tx -> sealed.update(tx, uncertain));
    StoredResponse answer = StoredResponse.json(201, "{\"note\":\"" + SECRET + "\"}");

    List<IdempotencyRecord> found = sealed.findUncertain(List.of(operation), null, 10);
    Optional<AuditEntry> entry = sealed.admin().resolve(key, uncertain.version(),
        Resolution.complete(answer, "alice", "the provider shows the charge", now));

    assertThat(found).singleElement().satisfies(r -> assertThat(r.checkpoint()).isEqualTo(values));
    assertThat(entry).isPresent();
    IdempotencyRecord stored = raw.find(key).orElseThrow();
    assertThat(EncryptedIdempotencyStore.isSealed(stored)).isTrue();
    assertThat(new String(stored.response().body(), UTF_8)).doesNotContain("4242424242424242");
    assertThat(sealed.find(key).orElseThrow().response()).isEqualTo(answer);
    assertThat(sealed.admin().history(key)).containsExactly(entry.get());
  }

  private EncryptedIdempotencyStore sealing(Keyring keyring) {
    return EncryptedIdempotencyStore.wrap(raw, Encryption.with(keyring), listener);
  }

  private RecordKey key(String key) {
    return new RecordKey(scope, Operation.of("POST /sealed"), IdempotencyKey.of(key));
  }

  private IdempotencyRecord completed(RecordKey key, int status) {
    StoredResponse response = StoredResponse.of(status,
        Map.of("Content-Type", List.of("application/json"), "Location", List.of("/things/1")),
        ("{\"id\":\"thing_1\",\"note\":\"" + SECRET + "\"}").getBytes(UTF_8));
    return IdempotencyRecord.finished(key, Fingerprint.ofHash("a".repeat(64)), response, RecordState.COMPLETED, now,
        Duration.ofHours(1));
  }

  private static void insert(IdempotencyStore store, IdempotencyRecord record) throws Exception {
    boolean inserted = store.inTransaction(tx -> store.insert(tx, record));
    assertThat(inserted).as("inserted %s", record.key()).isTrue();
  }

  private void rewrite(IdempotencyRecord next) throws Exception {
    boolean updated = raw.inTransaction(tx -> raw.update(tx, next));
    assertThat(updated).isTrue();
  }

  private static DecryptionException rootDecryption(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof DecryptionException) {
        return (DecryptionException) t;
      }
    }
    return null;
  }
}
