package dev.idem.core.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.fingerprint.JsonCanonicalizer;
import dev.idem.core.fingerprint.MalformedJsonException;
import dev.idem.core.internal.json.JsonTrees;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;
import net.jqwik.api.statistics.Statistics;

/**
 * Compares {@link JsonCanonicalizer} with {@link SlowCanonicalizer} on generated and hostile input: both accept the
 * same inputs and write the same bytes for them, and the production one fails only with {@link
 * MalformedJsonException}, at a position inside the input.
 */
@AddLifecycleHook(FuzzTries.class)
class JsonCanonicalizerFuzzTest {
  @Property(tries = 6_000)
  void agreesWithTheSlowCanonicalizerOnValidTreesSpelledAnyWay(@ForAll("spelledTrees") String json) {
    assertThat(assertAgree(json.getBytes(StandardCharsets.UTF_8))).isTrue();
  }

  @Property(tries = 12_000)
  void agreesWithTheSlowCanonicalizerOnGrammarDocumentsWithFaults(@ForAll("documents") byte[] json) {
    acceptedShare(assertAgree(json), 20);
  }

  @Property(tries = 12_000)
  void agreesWithTheSlowCanonicalizerOnMutatedDocuments(@ForAll("mutatedDocuments") byte[] json) {
    acceptedShare(assertAgree(json), 2);
  }

  @Property(tries = 12_000)
  void agreesWithTheSlowCanonicalizerOnNumbersOfEveryShape(@ForAll("numbers") byte[] json) {
    acceptedShare(assertAgree(json), 40);
  }

  @Property(tries = 10_000)
  void agreesWithTheSlowCanonicalizerOnRandomBytes(@ForAll("randomBytes") byte[] json) {
    acceptedShare(assertAgree(json), 0.05);
  }

  /** Checks both canonicalisers on one input; true when they accept it. */
  private static boolean assertAgree(byte[] json) {
    byte[] expected;
    try {
      expected = SlowCanonicalizer.canonicalize(json);
    } catch (SlowCanonicalizer.Rejected e) {
      expected = null;
    }
    byte[][] actual = new byte[1][];
    Throwable thrown = catchThrowable(() -> actual[0] = JsonCanonicalizer.canonicalize(json));

    if (expected == null) {
      assertThat(thrown).as("accepted what the slow canonicaliser rejects").isNotNull();
    } else {
      assertThat(thrown).as("rejected what the slow canonicaliser accepts").isNull();
      assertThat(new String(actual[0], StandardCharsets.UTF_8))
          .isEqualTo(new String(expected, StandardCharsets.UTF_8));
      assertThat(actual[0]).isEqualTo(expected);
    }
    if (thrown != null) {
      assertThat(thrown).isExactlyInstanceOf(MalformedJsonException.class);
      MalformedJsonException e = (MalformedJsonException) thrown;
      assertThat(e.line()).isPositive();
      assertThat(e.column()).isPositive();
      assertThat(e.offset()).isBetween(0L, (long) json.length);
    }
    return expected != null;
  }

  /** Counts accepted inputs, and fails the property if fewer than {@code minPercent} or more than 90% are. */
  private static void acceptedShare(boolean accepted, double minPercent) {
    Statistics.collect(accepted ? "accepted" : "rejected");
    Statistics.coverage(c -> c.check("accepted").percentage(p -> p >= minPercent && p <= 90));
  }

  @Provide
  Arbitrary<String> spelledTrees() {
    return Arbitraries.longs()
        .flatMap(seed -> JsonTrees.values(3).map(tree -> JsonTrees.spell(tree, new Random(seed))));
  }

  @Provide
  Arbitrary<byte[]> documents() {
    return Arbitraries.longs().map(seed -> JsonTexts.document(new Random(seed)));
  }

  @Provide
  Arbitrary<byte[]> mutatedDocuments() {
    return Arbitraries.longs().map(seed -> JsonTexts.mutated(new Random(seed)));
  }

  @Provide
  Arbitrary<byte[]> numbers() {
    return Arbitraries.longs().map(seed -> JsonTexts.number(new Random(seed)));
  }

  @Provide
  Arbitrary<byte[]> randomBytes() {
    return Arbitraries.longs().map(seed -> JsonTexts.bytes(new Random(seed)));
  }

}
