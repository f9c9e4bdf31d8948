package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.fingerprint.Fingerprint;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class KeysAndPoliciesTest {

  @Test
  void keyAcceptsOneTo255VisibleAsciiCharacters() {
    assertThat(IdempotencyKey.of("a").value()).isEqualTo("a");
    assertThat(IdempotencyKey.of("~".repeat(255)).value()).hasSize(255);
    assertThat(IdempotencyKey.of("!#$%&'()*+,-./:;<=>?@[]^_`{|}~").value()).isNotEmpty();
  }

  @Test
  void keyRejectsEmptyTooLongControlSpaceAndNonAscii() {
    assertThatThrownBy(() -> IdempotencyKey.of("")).isInstanceOf(InvalidKeyException.class).hasMessageContaining("empty");
    assertThatThrownBy(() -> IdempotencyKey.of(null)).isInstanceOf(InvalidKeyException.class);
    assertThatThrownBy(() -> IdempotencyKey.of("x".repeat(256)))
        .isInstanceOf(InvalidKeyException.class).hasMessageContaining("256 characters long; the limit is 255");
    assertThatThrownBy(() -> IdempotencyKey.of("a b")).hasMessageContaining("U+0020 at position 1");
    assertThatThrownBy(() -> IdempotencyKey.of("a\tb")).hasMessageContaining("U+0009");
    assertThatThrownBy(() -> IdempotencyKey.of("caf\u00e9")).hasMessageContaining("U+00E9");
    assertThatThrownBy(() -> IdempotencyKey.of("a\u007f")).hasMessageContaining("U+007F");
  }

  @Test
  void keyFromHeaderNeedsExactlyOneValue() {
    assertThat(IdempotencyKey.fromHeaderValues(List.of("k-1")).value()).isEqualTo("k-1");
    assertThatThrownBy(() -> IdempotencyKey.fromHeaderValues(List.of())).hasMessageContaining("missing");
    assertThatThrownBy(() -> IdempotencyKey.fromHeaderValues(List.of("a", "b")))
        .hasMessageContaining("appears 2 times");
    assertThatThrownBy(() -> IdempotencyKey.fromHeaderValues(List.of("a, b")))
        .as("a folded header is one value with a space in it").isInstanceOf(InvalidKeyException.class);
  }

  @Test
  void keyHeaderIsAStructuredFieldStringOrABareKeyAndNeverTakesParameters() {
    assertThat(IdempotencyKey.fromHeader("K7")).isEqualTo(IdempotencyKey.of("K7"));
    assertThat(IdempotencyKey.fromHeader("\"K7\"")).isEqualTo(IdempotencyKey.of("K7"));
    assertThat(IdempotencyKey.fromHeader(" \"a;b\" ").value()).isEqualTo("a;b");
    assertThat(IdempotencyKey.fromHeader("\"a\\\"b\\\\c\"").value()).isEqualTo("a\"b\\c");
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("\"K7\";p=1"))
        .hasMessageContaining("parameters are not accepted");
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("K7;p=1")).hasMessageContaining("parameters are not accepted");
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("\"K")).hasMessageContaining("never ends");
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("\"K\\a\"")).hasMessageContaining("escape at position 2");
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("\"K\" x")).hasMessageContaining("after the closing quote");
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("a,b")).hasMessageContaining("list");
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("\"a\tb\"")).hasMessageContaining("U+0009");
    assertThatThrownBy(() -> IdempotencyKey.fromHeader("\"\"")).hasMessageContaining("empty");
  }

  @Test
  void headerValueIsReadBackAsTheSameKey() {
    assertThat(IdempotencyKey.of("order-7").headerValue()).isEqualTo("order-7");
    assertThat(IdempotencyKey.of("a;b").headerValue()).isEqualTo("\"a;b\"");
    assertThat(IdempotencyKey.of("a\"b\\").headerValue()).isEqualTo("\"a\\\"b\\\\\"");
    for (String key : List.of("order-7", "a;b", "a,b", "a\"b\\", "\"q\"")) {
      assertThat(IdempotencyKey.fromHeader(IdempotencyKey.of(key).headerValue()).value()).isEqualTo(key);
    }
  }

  @Test
  void derivedKeyAppendsTheCallName() {
    assertThat(IdempotencyKey.of("order-1").derive("charge")).isEqualTo("order-1:charge");
    assertThatThrownBy(() -> IdempotencyKey.of("k").derive("")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> IdempotencyKey.of("k").derive("a b")).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void recordKeyDerivesKeysThatNeverCrossScopesAndStayWithin255Characters() {
    RecordKey alice = RecordKey.of("alice", "POST /payments", "order-1");
    RecordKey bob = RecordKey.of("bob", "POST /payments", "order-1");
    RecordKey longKey = RecordKey.of("alice", "POST /payments", "k".repeat(255));

    String forAlice = alice.derive("charge");

    assertThat(forAlice).startsWith("order-1:charge:").hasSize("order-1:charge:".length() + 12);
    assertThat(forAlice).isEqualTo(RecordKey.of("alice", "POST /payments", "order-1").derive("charge"));
    assertThat(bob.derive("charge")).isNotEqualTo(forAlice);
    assertThat(alice.derive("refund")).isNotEqualTo(forAlice);
    assertThat(longKey.derive("charge")).startsWith("idem:").hasSize(69);
    assertThat(IdempotencyKey.of(longKey.derive("charge")).value()).isNotEmpty();
  }

  @Test
  void derivedKeysWithANonceDependOnItStayWithin255CharactersAndKeepTheOldFormWithout() {
    RecordKey alice = RecordKey.of("alice", "POST /payments", "order-1");
    RecordKey longKey = RecordKey.of("alice", "POST /payments", "k".repeat(255));
    String nonce = IdempotencyRecord.newKeyNonce();

    String derived = alice.derive("charge", nonce);

    assertThat(nonce).hasSize(IdempotencyRecord.KEY_NONCE_LENGTH).matches("[0-9a-f]+")
        .isNotEqualTo(IdempotencyRecord.newKeyNonce());
    assertThat(derived).startsWith("order-1:charge:").hasSize("order-1:charge:".length() + 24)
        .isEqualTo(alice.derive("charge", nonce)).isNotEqualTo(alice.derive("charge"))
        .isNotEqualTo(alice.derive("charge", IdempotencyRecord.newKeyNonce()));
    assertThat(RecordKey.of("bob", "POST /payments", "order-1").derive("charge", nonce)).isNotEqualTo(derived);
    assertThat(alice.derive("charge", null)).isEqualTo(alice.derive("charge"));
    assertThat(longKey.derive("charge", nonce)).startsWith("idem:").hasSize(69)
        .isNotEqualTo(longKey.derive("charge"));
  }

  @Test
  void aRecordNeverShowsItsKeyNonce() {
    IdempotencyRecord claimed = IdempotencyRecord.claimed(RecordKey.of("alice", "POST /payments", "order-1"),
        Fingerprint.ofHash("0".repeat(64)), "w", Instant.EPOCH,
        Duration.ofSeconds(30), Duration.ofHours(1));

    assertThat(claimed.toString()).doesNotContain(claimed.keyNonce()).contains("keyNonce=(hidden)");
    assertThat(claimed.finish(RecordState.FAILED, StoredResponse.of(422, "no"), Instant.EPOCH).keyNonce())
        .isEqualTo(claimed.keyNonce());
  }

  @Test
  void scopeAndOperationRejectEmptyLongAndControlCharacters() {
    assertThatThrownBy(() -> Scope.of("")).hasMessageContaining("scope must be 1 to 255");
    assertThatThrownBy(() -> Scope.of("x".repeat(256))).hasMessageContaining("got 256");
    assertThatThrownBy(() -> Operation.of("POST /a\nb")).hasMessageContaining("control character at position 7");
    assertThat(Scope.of("t\u00e9nant").value()).isEqualTo("t\u00e9nant");
  }

  @Test
  void defaultKeepPolicyKeepsSuccessAndDeterministicFailuresOnly() {
    KeepPolicy keep = KeepPolicy.ofDefaults();

    assertThat(List.of(200, 201, 204, 302, 400, 402, 404, 410, 422)).allMatch(keep::keeps);
    assertThat(List.of(408, 409, 425, 429, 500, 502, 503, 504)).noneMatch(keep::keeps);
    assertThat(KeepPolicy.stateFor(201)).isEqualTo(RecordState.COMPLETED);
    assertThat(KeepPolicy.stateFor(402)).isEqualTo(RecordState.FAILED);
  }

  @Test
  void keepPolicyIsDeclarativeAndRefusesToKeep5xx() {
    KeepPolicy custom = KeepPolicy.builder().neverKeep(404).keep(409).build();

    assertThat(custom.keeps(404)).isFalse();
    assertThat(custom.keeps(409)).isTrue();
    assertThatThrownBy(() -> KeepPolicy.builder().keep(503).build())
        .hasMessageContaining("5xx statuses are transient and can never be kept, got 503");
    assertThatThrownBy(() -> KeepPolicy.builder().keep(99)).hasMessageContaining("100..999, got 99");
  }

  @Test
  void operationPolicyValidatesEagerlyAndNamesTheSetting() {
    assertThatThrownBy(() -> OperationPolicy.builder().ttl(Duration.ZERO))
        .hasMessage("ttl must be positive, got PT0S");
    assertThatThrownBy(() -> OperationPolicy.builder().lease(Duration.ofSeconds(-1)))
        .hasMessageContaining("lease must be positive");
    assertThatThrownBy(() -> OperationPolicy.builder().ttl(Duration.ofSeconds(10)).lease(Duration.ofSeconds(10))
        .build()).hasMessageContaining("lease PT10S must be shorter than ttl PT10S");
    assertThatThrownBy(() -> OperationPolicy.builder().maxResponseBytes(0))
        .hasMessageContaining("maxResponseBytes must be positive, got 0");

    OperationPolicy defaults = OperationPolicy.ofDefaults();

    assertThat(defaults.ttl()).isEqualTo(Duration.ofHours(24));
    assertThat(defaults.lease()).isEqualTo(Duration.ofSeconds(30));
    assertThat(defaults.inFlightWait()).isZero();
    assertThat(defaults.lookupFirst()).isTrue();
    assertThat(defaults.toBuilder().build().maxResponseBytes()).isEqualTo(1 << 20);
  }

  @Test
  void retentionDefaultsToThirtyDaysMayBeZeroAndIsNeverNegative() {
    assertThat(OperationPolicy.ofDefaults().retention()).isEqualTo(Duration.ofDays(30));
    assertThat(OperationPolicy.builder().retention(Duration.ZERO).build().retention()).isZero();
    assertThat(OperationPolicy.builder().retention(Duration.ofDays(90)).build().toBuilder().build().retention())
        .isEqualTo(Duration.ofDays(90));
    assertThat(OperationPolicy.ofDefaults().toString()).contains("retention=PT720H");
    assertThatThrownBy(() -> OperationPolicy.builder().retention(Duration.ofSeconds(-1)))
        .hasMessage("retention must not be negative, got PT-1S");
    assertThatThrownBy(() -> OperationPolicy.builder().retention(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void aFinalRecordIsRetainedBetweenItsExpiryAndItsRetentionEndThenGone() {
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    RecordKey key = RecordKey.of("acme", "POST /payments", "k-1");
    IdempotencyRecord done = IdempotencyRecord.finished(key, new Fingerprint("a".repeat(64), Map.of("x", "b")),
        StoredResponse.json(201, "{}"), RecordState.COMPLETED, t0, Duration.ofHours(1), Duration.ofDays(1));
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key, Fingerprint.ofHash("a".repeat(64)), "w", t0,
        Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofDays(1));
    IdempotencyRecord old = IdempotencyRecord.finished(key, Fingerprint.ofHash("a".repeat(64)),
        StoredResponse.json(201, "{}"), RecordState.COMPLETED, t0, Duration.ofHours(1));
    Instant expiry = t0.plus(Duration.ofHours(1));
    Instant end = expiry.plus(Duration.ofDays(1));

    assertThat(done.retainUntil()).isEqualTo(end);
    assertThat(List.of(done.isRetained(expiry.minusMillis(1)), done.isRetained(expiry), done.isRetained(end)))
        .containsExactly(false, true, false);
    assertThat(List.of(done.isGone(expiry), done.isGone(end))).containsExactly(false, true);
    assertThat(claimed.isRetained(expiry)).as("in progress: today's rules").isFalse();
    assertThat(claimed.isGone(expiry)).isTrue();
    assertThat(old.retainUntil()).isNull();
    assertThat(old.isGone(expiry)).as("a record from before retention existed").isTrue();
    assertThat(done.toString()).contains("retainUntil=" + end);
  }

  @Test
  void anInProgressRecordPastItsTtlIsNotExpiredWhileItsLeaseIsLive() {
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    RecordKey key = RecordKey.of("acme", "POST /payments", "k-lease");
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key, Fingerprint.ofHash("a".repeat(64)), "dead", t0,
        Duration.ofSeconds(30), Duration.ofHours(1), Duration.ofDays(1));
    Instant expiry = claimed.expiresAt();
    // taken over ten seconds before the TTL: leased until twenty seconds after it
    IdempotencyRecord taken = claimed.withLease("b", expiry.plusSeconds(20), expiry.minusSeconds(10));

    assertThat(List.of(taken.isExpired(expiry.plusSeconds(1)), taken.isGone(expiry.plusSeconds(1))))
        .containsExactly(false, false);
    assertThat(List.of(taken.isExpired(expiry.plusSeconds(20)), taken.isGone(expiry.plusSeconds(20))))
        .as("once the lease has ended").containsExactly(true, true);
    assertThat(claimed.isGone(expiry)).as("a claim whose lease ended before its TTL").isTrue();
  }

  @Test
  void aTombstoneKeepsTheKeyTheOutcomeTheFingerprintHashAndTheTimesOnly() {
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    IdempotencyRecord claimed = IdempotencyRecord.claimed(RecordKey.of("acme", "POST /payments", "k-2"),
        new Fingerprint("a".repeat(64), Map.of("amount", "b".repeat(64))), "w", t0, Duration.ofSeconds(30),
        Duration.ofHours(1), Duration.ofDays(30));
    IdempotencyRecord done = claimed.withRecoveryPoint("charge", Checkpoint.empty().with("charge_id", "ch_1"),
        t0.plusSeconds(60), t0).finish(RecordState.FAILED, StoredResponse.json(402, "{\"declined\":true}"), t0);
    Instant later = t0.plus(Duration.ofHours(2));

    IdempotencyRecord tombstone = done.tombstone(later);

    assertThat(tombstone.key()).isEqualTo(done.key());
    assertThat(tombstone.state()).isEqualTo(RecordState.FAILED);
    assertThat(tombstone.fingerprint()).isEqualTo(Fingerprint.ofHash("a".repeat(64)));
    assertThat(tombstone.response()).isEqualTo(StoredResponse.of(402, new byte[0]));
    assertThat(tombstone.checkpoint()).isEqualTo(Checkpoint.empty());
    assertThat(List.of(String.valueOf(tombstone.recoveryPoint()), String.valueOf(tombstone.keyNonce())))
        .containsExactly("null", "null");
    assertThat(tombstone.version()).isEqualTo(done.version() + 1);
    assertThat(List.of(tombstone.createdAt(), tombstone.updatedAt(), tombstone.expiresAt(), tombstone.retainUntil()))
        .containsExactly(t0, later, done.expiresAt(), done.retainUntil());
    assertThat(done.tombstone(done.expiresAt().plusSeconds(1)).isRetained(done.expiresAt().minusSeconds(1)))
        .as("a tombstone made on a clock ahead of the reader's").isTrue();
    assertThat(done.isRetained(done.expiresAt().minusSeconds(1))).isFalse();
    assertThatThrownBy(() -> claimed.tombstone(later)).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> new IdempotencyRecord(done.key(), done.state(), done.fingerprint(), done.response(),
        null, Checkpoint.empty(), null, null, 1, t0, t0, t0.plusSeconds(60), null, t0))
        .hasMessageContaining("is before expiresAt");
  }

  @Test
  void storedResponseNeverKeepsSecretsAndCopiesItsBody() {
    byte[] body = {1, 2, 3};
    StoredResponse r = StoredResponse.of(201, Map.of("Set-Cookie", List.of("s=1"), "Authorization",
        List.of("Bearer x"), "Cookie", List.of("c"), "Location", List.of("/p/1")), body);
    body[0] = 9;

    assertThat(r.headers()).containsOnlyKeys("location");
    assertThat(r.body()).containsExactly(1, 2, 3);
    assertThat(r.header("LOCATION")).isEqualTo("/p/1");
  }

  @Test
  void checkpointIsBounded() {
    assertThat(Checkpoint.empty().with("payment_id", "pay_1").get("payment_id")).isEqualTo("pay_1");
    assertThatThrownBy(() -> Checkpoint.empty().with("big", "x".repeat(4097)))
        .hasMessageContaining("is 4097 characters; the limit is 4096");
    assertThatThrownBy(() -> Checkpoint.empty().with("n".repeat(65), "v")).hasMessageContaining("1 to 64");
    java.util.Map<String, String> many = new java.util.HashMap<>();
    for (int i = 0; i < 65; i++) {
      many.put("k" + i, "v");
    }
    assertThatThrownBy(() -> Checkpoint.of(many)).hasMessageContaining("at most 64 values, got 65");
  }

  @Test
  void scopeRejectsLoneSurrogates() {
    assertThatThrownBy(() -> Scope.of("\uD800x")).hasMessageContaining("unpaired surrogate");
    assertThat(Scope.of("\uD83D\uDE00").value()).hasSize(2);
  }

  @Test
  void builderRequiresAStore() {
    assertThatThrownBy(() -> Idem.builder().name("x").build())
        .isInstanceOf(ConfigurationException.class).hasMessageContaining("Idem 'x': a store is required");
  }
}
