package dev.idem.core.fingerprint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class FingerprinterTest {
  private static final String OPERATION = "POST /payments";

  private final Fingerprinter whole = Fingerprinter.ofDefaults();

  @Test
  void jsonBodyHashIsPinned() {
    Fingerprint fp = whole.fingerprint(OPERATION, utf8("{ \"currency\": \"EUR\", \"amount\": 1050.00 }"), "application/json");

    assertThat(fp.hash()).isEqualTo("5cd70a6ec9ad8d8e6d210ff5a8be5142415a6e47334efa917ae933093ac66db0");
    assertThat(fp.fieldHashes()).containsOnly(
        Map.entry("amount", "ffa6059b954a4602"),
        Map.entry("currency", "87ef325635aa32dd"));
  }

  @Test
  void jsonBodyHashIsSha256OfOperationLineFeedTagAndCanonicalBytes() {
    byte[] body = utf8("{\"b\": 2, \"a\": [1.0, \"x\"], \"c\": {\"z\": null, \"y\": true}}");

    Fingerprint fp = whole.fingerprint(OPERATION, body, "application/json");

    assertThat(fp.hash()).isEqualTo(sha256(OPERATION + "\nJ{\"a\":[1,\"x\"],\"b\":2,\"c\":{\"y\":true,\"z\":null}}"));
    assertThat(fp.fieldHashes()).containsOnly(
        Map.entry("a", fieldHash("[1,\"x\"]")), Map.entry("b", fieldHash("2")), Map.entry("c", fieldHash("{\"y\":true,\"z\":null}")));
  }

  @Test
  void nonObjectJsonHasNoFieldHashes() {
    Fingerprint array = whole.fingerprint(OPERATION, utf8("[1, 2]"), "application/json");
    Fingerprint scalar = whole.fingerprint(OPERATION, utf8("\"x\""), "application/json");
    Fingerprint emptyObject = whole.fingerprint(OPERATION, utf8("{}"), "application/json");

    assertThat(array.hash()).isEqualTo(sha256(OPERATION + "\nJ[1,2]"));
    assertThat(array.fieldHashes()).isEmpty();
    assertThat(scalar.hash()).isEqualTo(sha256(OPERATION + "\nJ\"x\""));
    assertThat(scalar.fieldHashes()).isEmpty();
    assertThat(emptyObject.hash()).isEqualTo(sha256(OPERATION + "\nJ{}"));
    assertThat(emptyObject.fieldHashes()).isEmpty();
  }

  @Test
  void rawBodyIsHashedWithItsOwnTag() {
    Fingerprint fp = whole.fingerprint(OPERATION, utf8("amount=1050"), "application/x-www-form-urlencoded");

    assertThat(fp.hash()).isEqualTo(sha256(OPERATION + "\nRapplication/x-www-form-urlencoded\namount=1050"));
    assertThat(fp.hash()).isEqualTo("19b4e4cbcdf85831b5718d0cc00ddf03910733fc0e88c74653cada599f071047");
    assertThat(fp.fieldHashes()).isEmpty();
  }

  @Test
  void sameBytesAsJsonAndAsRawNeverCollide() {
    byte[] canonical = utf8("{\"a\":1}");

    Fingerprint asJson = whole.fingerprint(OPERATION, canonical, "application/json");
    Fingerprint asRaw = whole.fingerprint(OPERATION, canonical, "text/plain");

    assertThat(asJson.hash()).isNotEqualTo(asRaw.hash());
    assertThat(asRaw.hash()).isEqualTo(sha256(OPERATION + "\nRtext/plain\n{\"a\":1}"));
  }

  @Test
  void invalidJsonUnderAJsonContentTypeIsHashedRaw() {
    byte[] body = utf8("{\"a\": 1,}");

    Fingerprint fp = whole.fingerprint(OPERATION, body, "application/json");

    assertThat(fp.hash()).isEqualTo(sha256(OPERATION + "\nRapplication/json\n{\"a\": 1,}"));
    assertThat(fp.fieldHashes()).isEmpty();
  }

  @ParameterizedTest
  @NullSource
  @ValueSource(strings = {"application/json", "APPLICATION/JSON", "application/json; charset=utf-8",
      " application/json ;charset=UTF-8", "application/problem+json", "application/merge-patch+json",
      "application/vnd.api+json; ext=bulk", "Application/Vnd.Idem.Payment+JSON"})
  void readsJsonContentTypes(String contentType) {
    Fingerprint fp = whole.fingerprint(OPERATION, utf8("{\"b\":1, \"a\":2}"), contentType);

    assertThat(fp.hash()).isEqualTo(sha256(OPERATION + "\nJ{\"a\":2,\"b\":1}"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"text/plain", "text/json", "application/jsonx", "application/json-seq", "application/+json",
      "+json", "json", "", "application/x-www-form-urlencoded", "application/json+zip", "a/b/c+json"})
  void hashesOtherContentTypesRaw(String contentType) {
    Fingerprint fp = whole.fingerprint(OPERATION, utf8("{\"b\":1, \"a\":2}"), contentType);

    assertThat(fp.hash()).isEqualTo(sha256(OPERATION + "\nR" + contentType + "\n{\"b\":1, \"a\":2}"));
    assertThat(Fingerprinter.isJsonMediaType(contentType)).isFalse();
  }

  @Test
  void theMediaTypeOfARawBodyIsPartOfItsFingerprint() {
    byte[] body = utf8("id,amount\n1,1050\n");

    Fingerprint csv = whole.fingerprint(OPERATION, body, "text/csv");
    Fingerprint octets = whole.fingerprint(OPERATION, body, "application/octet-stream");
    Fingerprint none = whole.fingerprint(OPERATION, body, null);
    Fingerprint latin1 = whole.fingerprint(OPERATION, body, "text/csv; charset=ISO-8859-1");

    assertThat(List.of(csv.hash(), octets.hash(), none.hash(), latin1.hash())).doesNotHaveDuplicates();
    assertThat(none.hash()).isEqualTo(sha256(OPERATION + "\nR\nid,amount\n1,1050\n"));
    assertThat(csv.matches(whole.fingerprint(OPERATION, body, "text/csv"))).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {"text/csv;charset=utf-8", "Text/CSV; Charset=UTF-8", " text/csv ; charset=\"utf-8\" ",
      "text/csv;charset=utf-8;", "text/csv;;charset=utf-8"})
  void oneMediaTypeWrittenInOtherWaysIsTheSameRequest(String contentType) {
    byte[] body = utf8("id,amount\n1,1050\n");

    assertThat(Fingerprinter.canonicalMediaType(contentType)).isEqualTo("text/csv;charset=\"utf-8\"");
    assertThat(whole.fingerprint(OPERATION, body, contentType))
        .isEqualTo(whole.fingerprint(OPERATION, body, "text/csv;charset=utf-8"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"application/octet-stream", "text/csv", "Text/CSV", "text/csv ", "text/csv;charset=utf-8",
      "text/x%41", "a\"b/c", "x", ""})
  void aMediaTypeIsHashedInItsCanonicalFormWhateverPathItTakes(String contentType) {
    byte[] body = utf8("id,amount\n1,1050\n");

    assertThat(whole.fingerprint(OPERATION, body, contentType).hash()).isEqualTo(sha256(OPERATION + "\nR"
        + Fingerprinter.canonicalMediaType(contentType) + "\nid,amount\n1,1050\n"));
  }

  @Test
  void aMediaTypesParametersAreSortedByNameAndKeepTheirValues() {
    assertThat(Fingerprinter.canonicalMediaType("multipart/mixed; Boundary=\"A;b\"; a=1; a=2"))
        .isEqualTo("multipart/mixed;a=\"1\";a=\"2\";boundary=\"A;b\"");
    assertThat(Fingerprinter.canonicalMediaType("text/plain; a=2; a=1"))
        .isNotEqualTo(Fingerprinter.canonicalMediaType("text/plain; a=1; a=2"));
    assertThat(Fingerprinter.canonicalMediaType("text/plain; x=\"q\\\"uote\""))
        .isEqualTo("text/plain;x=\"q\\\"uote\"");
    assertThat(Fingerprinter.canonicalMediaType("text/plain; x=Mixed")).isEqualTo("text/plain;x=\"Mixed\"");
    assertThat(Fingerprinter.canonicalMediaType(null)).isEmpty();
    assertThat(Fingerprinter.canonicalMediaType("  ")).isEmpty();
  }

  @Test
  void aMediaTypeNeverPutsALineFeedIntoTheHashedBytes() {
    String hostile = "text/plain\nR\nbody";

    assertThat(Fingerprinter.canonicalMediaType(hostile)).isEqualTo("text/plain%0ar%0abody")
        .doesNotContain("\n");
    assertThat(Fingerprinter.canonicalMediaType("text/x%0a")).isEqualTo("text/x%250a");
    assertThat(whole.fingerprint(OPERATION, utf8("x"), hostile))
        .isNotEqualTo(whole.fingerprint(OPERATION, utf8("body\nx"), "text/plain"));
  }

  @Test
  void emptyBodyHashesTheOperationAlone() {
    Fingerprint none = whole.fingerprint(OPERATION, null, null);
    Fingerprint empty = whole.fingerprint(OPERATION, new byte[0], "application/json");
    Fingerprint emptyRaw = whole.fingerprint(OPERATION, new byte[0], "text/plain");

    assertThat(none.hash()).isEqualTo("ff470aebb27787e5c93122061a0cef096a4dbfa74aa26bd9b063192e4606bac7");
    assertThat(empty).isEqualTo(none);
    assertThat(emptyRaw).isEqualTo(none);
    assertThat(none.fieldHashes()).isEmpty();
  }

  @Test
  void operationIsPartOfTheHash() {
    byte[] body = utf8("{\"a\":1}");

    Fingerprint post = whole.fingerprint("POST /payments", body, null);
    Fingerprint refund = whole.fingerprint("POST /refunds", body, null);

    assertThat(post.hash()).isNotEqualTo(refund.hash());
    assertThat(post.fieldHashes()).isEqualTo(refund.fieldHashes());
  }

  @Test
  void rejectsAnOperationWithALineFeed() {
    assertThatThrownBy(() -> whole.fingerprint("POST /a\nJ", null, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("operation must not contain a line feed, got 'POST /a\\nJ'");
    assertThatThrownBy(() -> whole.fingerprint(null, null, null)).isInstanceOf(NullPointerException.class)
        .hasMessage("operation");
  }

  @Test
  void fingerprintJsonRejectsWhatIsNotJson() {
    assertThatThrownBy(() -> whole.fingerprintJson(OPERATION, utf8("{\"a\": 1,}")))
        .isInstanceOf(MalformedJsonException.class)
        .hasMessageContaining("line 1, column 9");
    assertThatThrownBy(() -> whole.fingerprintJson(OPERATION, new byte[0]))
        .isInstanceOf(MalformedJsonException.class)
        .hasMessageContaining("empty document");
  }

  @Test
  void fingerprintJsonEqualsFingerprintOfAJsonBody() {
    byte[] body = utf8("{\"a\": [1, 2]}");

    assertThat(whole.fingerprintJson(OPERATION, body)).isEqualTo(whole.fingerprint(OPERATION, body, "application/json"));
  }

  @Test
  void includeKeepsOnlyTheListedValues() {
    Fingerprinter amountOnly = Fingerprinter.of(FingerprintPolicy.builder().include("/amount").build());

    Fingerprint a = amountOnly.fingerprint(OPERATION, utf8("{\"amount\": 5, \"note\": \"x\"}"), null);
    Fingerprint b = amountOnly.fingerprint(OPERATION, utf8("{\"note\": \"y\", \"amount\": 5.0}"), null);
    Fingerprint c = amountOnly.fingerprint(OPERATION, utf8("{\"amount\": 6, \"note\": \"x\"}"), null);

    assertThat(a).isEqualTo(b);
    assertThat(a.hash()).isEqualTo(sha256(OPERATION + "\nJ{\"amount\":5}"));
    assertThat(a.fieldHashes()).containsOnlyKeys("amount");
    assertThat(c.hash()).isNotEqualTo(a.hash());
    assertThat(a.differingFields(c)).containsExactly("amount");
  }

  @Test
  void bodiesWithTooManyMembersOrTooLongANameGetNoFieldHashesButStillDiffer() {
    StringBuilder wide = new StringBuilder("{");
    for (int i = 0; i < Fingerprinter.MAX_FIELD_HASHES; i++) {
      wide.append(i == 0 ? "" : ",").append("\"f").append(i).append("\":").append(i);
    }
    String atTheLimit = wide + "}";
    String overTheLimit = wide + ",\"one_more\":1}";
    String longName = "{\"" + "n".repeat(Fingerprinter.MAX_FIELD_NAME + 1) + "\":1,\"amount\":5}";
    String nameAtTheLimit = "{\"" + "n".repeat(Fingerprinter.MAX_FIELD_NAME) + "\":1,\"amount\":5}";

    assertThat(whole.fingerprint(OPERATION, utf8(atTheLimit), null).fieldHashes())
        .hasSize(Fingerprinter.MAX_FIELD_HASHES);
    assertThat(whole.fingerprint(OPERATION, utf8(overTheLimit), null).fieldHashes()).isEmpty();
    assertThat(whole.fingerprint(OPERATION, utf8(longName), null).fieldHashes()).isEmpty();
    assertThat(whole.fingerprint(OPERATION, utf8(nameAtTheLimit), null).fieldHashes()).hasSize(2);
    assertThat(whole.fingerprint(OPERATION, utf8(overTheLimit), null).hash())
        .isNotEqualTo(whole.fingerprint(OPERATION, utf8(overTheLimit.replace("\"one_more\":1", "\"one_more\":2")),
            null).hash());
  }

  @Test
  void includeKeepsTheStructureOfAncestors() {
    assertThat(canonical(policy().include("/a/b"), "{\"a\": {\"b\": 1, \"c\": 2}, \"d\": 3}")).isEqualTo("{\"a\":{\"b\":1}}");
    assertThat(canonical(policy().include("/items/1/sku"),
        "{\"items\": [{\"sku\": \"a\", \"q\": 1}, {\"sku\": \"b\", \"q\": 2}]}")).isEqualTo("{\"items\":[{\"sku\":\"b\"}]}");
    assertThat(canonical(policy().include("/a/b", "/a/c/0"), "{\"a\": {\"b\": {}, \"c\": [[1], 2], \"d\": 1}}"))
        .isEqualTo("{\"a\":{\"b\":{},\"c\":[[1]]}}");
  }

  @Test
  void includeThatMatchesNothingLeavesNoTrace() {
    FingerprintPolicy.Builder ab = policy().include("/a/b");

    assertThat(canonical(ab, "{\"x\": 1}")).isEqualTo("{}");
    assertThat(canonical(ab, "{\"a\": 5}")).isEqualTo("{}");
    assertThat(canonical(ab, "{\"a\": {\"c\": 1}}")).isEqualTo("{}");
    assertThat(canonical(ab, "{\"a\": [1, 2]}")).isEqualTo("{}");
    assertThat(canonical(ab, "[1]")).isEqualTo("[]");
    assertThat(canonical(ab, "7")).isEmpty();
    assertThat(fingerprinter(ab).fingerprint(OPERATION, utf8("7"), null).hash()).isEqualTo(sha256(OPERATION + "\nJ"));
  }

  @Test
  void includeOfTheEmptyPointerIsTheWholeBody() {
    assertThat(canonical(policy().include("", "/a"), "{\"b\": 1, \"a\": 2}")).isEqualTo("{\"a\":2,\"b\":1}");
  }

  @Test
  void pointersUseRfc6901EscapesAndMatchEscapedNames() {
    assertThat(canonical(policy().include("/a~1b/c~0d"), "{\"a/b\": {\"c~d\": 1, \"e\": 2}, \"a\": 3}"))
        .isEqualTo("{\"a/b\":{\"c~d\":1}}");
    assertThat(canonical(policy().include("/amount", "/é"), "{\"\\u0061mount\": 5, \"\\u00e9\": 1, \"x\": 2}"))
        .isEqualTo("{\"amount\":5,\"é\":1}");
    assertThat(canonical(policy().exclude("/"), "{\"\": 1, \"a\": 2}")).isEqualTo("{\"a\":2}");
  }

  @Test
  void arrayIndexTokensMatchElementsAndMembers() {
    assertThat(canonical(policy().include("/0", "/2"), "[\"a\", \"b\", \"c\"]")).isEqualTo("[\"a\",\"c\"]");
    assertThat(canonical(policy().include("/0"), "{\"0\": 1, \"1\": 2}")).isEqualTo("{\"0\":1}");
    assertThat(canonical(policy().include("/01", "/-"), "[\"a\", \"b\"]")).isEqualTo("[]");
  }

  @Test
  void excludeRemovesValuesAndKeepsEmptiedContainers() {
    assertThat(canonical(policy().exclude("/timestamp"), "{\"timestamp\": 1, \"a\": 2}")).isEqualTo("{\"a\":2}");
    assertThat(canonical(policy().exclude("/meta/nonce"), "{\"meta\": {\"nonce\": \"n\"}, \"a\": 2}"))
        .isEqualTo("{\"a\":2,\"meta\":{}}");
    assertThat(canonical(policy().exclude("/items/0"), "{\"items\": [1, 2, 3]}")).isEqualTo("{\"items\":[2,3]}");
    assertThat(canonical(policy().exclude("/nothing/here"), "{\"a\": [1]}")).isEqualTo("{\"a\":[1]}");
    assertThat(canonical(policy().exclude("/a/b"), "{\"a\": 5}")).isEqualTo("{\"a\":5}");
  }

  @Test
  void excludeAppliesAfterIncludeOnTheBodyAsSent() {
    assertThat(canonical(policy().include("/order").exclude("/order/ts"), "{\"order\": {\"id\": 1, \"ts\": 2}, \"x\": 3}"))
        .isEqualTo("{\"order\":{\"id\":1}}");
    assertThat(canonical(policy().include("/a/b").exclude("/a/b"), "{\"a\": {\"b\": 1}}")).isEqualTo("{}");
    assertThat(canonical(policy().include("/items/2").exclude("/items/0"), "{\"items\": [1, 2, 3]}"))
        .isEqualTo("{\"items\":[3]}");
    assertThat(canonical(policy().include("/a").exclude("/a"), "{\"a\": 1, \"b\": 2}")).isEqualTo("{}");
  }

  @Test
  void fieldHashesDescribeTheProjectedMembers() {
    Fingerprinter fp = fingerprinter(policy().exclude("/ts", "/order/ts"));

    Fingerprint result = fp.fingerprint(OPERATION, utf8("{\"ts\": 1, \"order\": {\"id\": 7, \"ts\": 9}, \"n\": 2}"), null);

    assertThat(result.fieldHashes()).containsOnly(Map.entry("order", fieldHash("{\"id\":7}")), Map.entry("n", fieldHash("2")));
  }

  @Test
  void includesAndExcludesDoNotApplyToRawBodies() {
    Fingerprinter fp = fingerprinter(policy().include("/a"));

    Fingerprint raw = fp.fingerprint(OPERATION, utf8("a=1&b=2"), "text/plain");

    assertThat(raw.hash()).isEqualTo(sha256(OPERATION + "\nRtext/plain\na=1&b=2"));
  }

  @Test
  void bodyDeeperThanThePolicyLimitIsHashedRawOrRejected() {
    Fingerprinter shallow = fingerprinter(policy().maxDepth(2));
    byte[] deep = utf8("{\"a\": [[1]]}");

    Fingerprint fp = shallow.fingerprint(OPERATION, deep, "application/json");

    assertThat(fp.hash()).isEqualTo(sha256(OPERATION + "\nRapplication/json\n{\"a\": [[1]]}"));
    assertThatThrownBy(() -> shallow.fingerprintJson(OPERATION, deep)).isInstanceOf(MalformedJsonException.class)
        .hasMessageContaining("nesting deeper than 2 levels");
    assertThat(whole.fingerprint(OPERATION, deep, null).hash()).isEqualTo(sha256(OPERATION + "\nJ{\"a\":[[1]]}"));
  }

  @Test
  void handlesBodiesLargerThanTheCachedBuffersAndKeepsWorkingAfterwards() {
    StringBuilder sb = new StringBuilder("[");
    for (int i = 0; i < 200_000; i++) {
      sb.append(i == 0 ? "" : ",").append("{\"k\":").append(i).append('}');
    }
    String big = sb.append(']').toString();

    Fingerprint large = whole.fingerprint(OPERATION, utf8(big), null);
    Fingerprint small = whole.fingerprint(OPERATION, utf8("{\"a\":1}"), null);

    assertThat(large.hash()).isEqualTo(sha256(OPERATION + "\nJ" + big));
    assertThat(small.hash()).isEqualTo(sha256(OPERATION + "\nJ{\"a\":1}"));
  }

  @Test
  void isSafeToShareBetweenThreads() throws Exception {
    Fingerprinter fp = fingerprinter(policy().exclude("/n"));
    List<byte[]> bodies = new ArrayList<>();
    List<Fingerprint> expected = new ArrayList<>();
    for (int i = 0; i < 64; i++) {
      bodies.add(utf8("{\"n\": " + i + ", \"v\": [" + i + ", \"" + "x".repeat(i) + "\"], \"w\": {\"k\": " + (i % 3) + "}}"));
      expected.add(fp.fingerprint(OPERATION, bodies.get(i), null));
    }
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Callable<Boolean>> tasks = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int offset = t;
        tasks.add(() -> {
          for (int round = 0; round < 200; round++) {
            int i = (round * 7 + offset) % bodies.size();
            if (!fp.fingerprint(OPERATION, bodies.get(i), "application/json").equals(expected.get(i))) {
              return false;
            }
          }
          return true;
        });
      }

      List<Future<Boolean>> results = pool.invokeAll(tasks);

      for (Future<Boolean> r : results) {
        assertThat(r.get()).isTrue();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void ofReturnsTheSharedDefaultForTheDefaultPolicy() {
    assertThat(Fingerprinter.of(FingerprintPolicy.builder().build())).isSameAs(Fingerprinter.ofDefaults());
    assertThat(fingerprinter(policy().include("/a")).policy()).isEqualTo(policy().include("/a").build());
  }

  private static FingerprintPolicy.Builder policy() {
    return FingerprintPolicy.builder();
  }

  private static Fingerprinter fingerprinter(FingerprintPolicy.Builder policy) {
    return Fingerprinter.of(policy.build());
  }

  private static String canonical(FingerprintPolicy.Builder policy, String json) {
    return new String(fingerprinter(policy).canonicalJson(utf8(json)), StandardCharsets.UTF_8);
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static String fieldHash(String canonicalValue) {
    return sha256(canonicalValue).substring(0, 16);
  }

  static String sha256(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(utf8(s)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new AssertionError(e);
    }
  }
}
