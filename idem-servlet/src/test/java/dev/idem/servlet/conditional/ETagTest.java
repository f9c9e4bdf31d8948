package dev.idem.servlet.conditional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ETagTest {

  @Test
  void aVersionTagIsStrongQuotedAndGivesItsVersionBack() {
    ETag tag = ETag.ofVersion(42);

    assertThat(tag.toString()).isEqualTo("\"v42\"");
    assertThat(tag.isWeak()).isFalse();
    assertThat(tag.version()).hasValue(42);
    assertThat(ETag.weak("v42").version()).isEmpty();
    assertThat(ETag.strong("v042").version()).isEmpty();
    assertThat(ETag.strong("x42").version()).isEmpty();
    assertThat(ETag.strong("v").version()).isEmpty();
    assertThat(ETag.strong("v99999999999999999999").version()).isEmpty();
  }

  @Test
  void creationRefusesCharactersTheRfcDoesNotAllow() {
    assertThatThrownBy(() -> ETag.strong("a\"b")).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("U+0022").hasMessageContaining("index 1");
    assertThatThrownBy(() -> ETag.strong("a b")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ETag.weak("\u00e9")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ETag.strong("x".repeat(ETag.MAX_OPAQUE_LENGTH + 1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ETag.ofVersion(-1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("-1");
    assertThat(ETag.strong("").toString()).isEqualTo("\"\"");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      // value         | opaque | weak
      "\"xyzzy\"       | xyzzy  | false",
      "W/\"xyzzy\"     | xyzzy  | true",
      "'  \"a,b\"  '   | a,b    | false",
      "\"\"            | ''     | false",
  })
  void validTagsParse(String value, String opaque, boolean weak) {
    Optional<ETag> tag = ETag.parse(value);

    assertThat(tag).isPresent();
    assertThat(tag.get().opaque()).isEqualTo(opaque);
    assertThat(tag.get().isWeak()).isEqualTo(weak);
  }

  @ParameterizedTest
  @ValueSource(strings = {"xyzzy", "w/\"xyzzy\"", "W/xyzzy", "\"abc", "abc\"", "\"a\"b\"", "\"a b\"", "W/", "\"",
      "*", "\"\u0001\"", "\"\u0100\"", "W/ \"a\""})
  void malformedTagsAreRefusedWithoutExceptions(String value) {
    assertThat(ETag.parse(value)).isEmpty();
  }

  /** RFC 9110 section 8.8.3.2, the table of weak and strong comparison. */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "W/\"1\" | W/\"1\" | false | true",
      "W/\"1\" | W/\"2\" | false | false",
      "W/\"1\" | \"1\"   | false | true",
      "\"1\"   | \"1\"   | true  | true",
      "\"1\"   | \"2\"   | false | false",
  })
  void comparisonFollowsTheRfcTable(String left, String right, boolean strong, boolean weak) {
    ETag a = ETag.parse(left).orElseThrow();
    ETag b = ETag.parse(right).orElseThrow();

    assertThat(a.strongMatch(b)).isEqualTo(strong);
    assertThat(b.strongMatch(a)).isEqualTo(strong);
    assertThat(a.weakMatch(b)).isEqualTo(weak);
    assertThat(b.weakMatch(a)).isEqualTo(weak);
  }

  /** A property over random tags: printing and parsing round-trip, and strong matching implies weak matching. */
  @Test
  void randomTagsRoundTripAndStrongImpliesWeak() {
    Random random = new Random(8);
    for (int i = 0; i < 5_000; i++) {
      ETag a = randomTag(random);
      ETag b = random.nextBoolean() ? a : randomTag(random);

      assertThat(ETag.parse(a.toString())).hasValue(a);
      assertThat(a.strongMatch(b)).isEqualTo(b.strongMatch(a));
      if (a.strongMatch(b)) {
        assertThat(a.weakMatch(b)).isTrue();
        assertThat(a.isWeak() || b.isWeak()).isFalse();
      }
      if (a.isWeak()) {
        assertThat(a.strongMatch(b)).isFalse();
      }
      assertThat(a.weakMatch(b)).isEqualTo(a.opaque().equals(b.opaque()));
    }
  }

  /** A property over random lists: a printed list parses back to the same tags, in order. */
  @Test
  void randomListsRoundTrip() {
    Random random = new Random(13);
    for (int i = 0; i < 2_000; i++) {
      List<ETag> tags = new ArrayList<>();
      int n = 1 + random.nextInt(5);
      for (int j = 0; j < n; j++) {
        tags.add(randomTag(random));
      }
      StringBuilder header = new StringBuilder();
      for (ETag t : tags) {
        header.append(random.nextBoolean() ? " , " : ",").append(t).append(random.nextBoolean() ? " \t" : "");
      }

      assertThat(ETagList.parse(List.of(header.toString()))).hasValue(ETagList.of(tags));
      assertThat(ETagList.parse(List.of(ETagList.of(tags).toString()))).hasValue(ETagList.of(tags));
    }
  }

  /** A property over random garbage: parsing never throws. */
  @Test
  void randomGarbageNeverThrows() {
    Random random = new Random(21);
    String alphabet = "\"W/w*, \t\u0001\u00ff\u0100az09";
    for (int i = 0; i < 20_000; i++) {
      StringBuilder s = new StringBuilder();
      int n = random.nextInt(12);
      for (int j = 0; j < n; j++) {
        s.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }

      ETag.parse(s.toString()).ifPresent(t -> assertThat(ETag.parse(t.toString())).hasValue(t));
      ETagList.parse(List.of(s.toString())).ifPresent(l -> assertThat(l.isAny() || !l.tags().isEmpty()).isTrue());
    }
  }

  private static ETag randomTag(Random random) {
    String opaque = random.nextInt(3) == 0 ? "v" + random.nextInt(4) : Integer.toString(random.nextInt(5), 36)
        + (random.nextBoolean() ? ",x" : "");
    return random.nextBoolean() ? ETag.weak(opaque) : ETag.strong(opaque);
  }
}
