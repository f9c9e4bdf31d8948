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
