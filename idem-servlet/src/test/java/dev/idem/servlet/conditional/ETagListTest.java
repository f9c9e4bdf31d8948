package dev.idem.servlet.conditional;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ETagListTest {

  @Test
  void aStarIsAnyAndMatchesEveryExistingRepresentationButNoAbsentOne() {
    ETagList any = ETagList.parse(List.of(" * ")).orElseThrow();

    assertThat(any.isAny()).isTrue();
    assertThat(any.matchesStrongly(ETag.weak("a"))).isTrue();
    assertThat(any.matchesWeakly(ETag.strong("a"))).isTrue();
    assertThat(any.matchesStrongly(null)).isFalse();
    assertThat(any.matchesWeakly(null)).isFalse();
    assertThat(any.toString()).isEqualTo("*");
  }

  @Test
  void severalLinesOfOneFieldAreOneListAndEmptyElementsAreSkipped() {
    ETagList list = ETagList.parse(List.of("\"a\", ,W/\"b\"", ",\"c,d\"")).orElseThrow();

    assertThat(list.tags()).containsExactly(ETag.strong("a"), ETag.weak("b"), ETag.strong("c,d"));
    assertThat(list.matchesStrongly(ETag.strong("b"))).isFalse();
    assertThat(list.matchesWeakly(ETag.strong("b"))).isTrue();
    assertThat(list.matchesStrongly(ETag.strong("c,d"))).isTrue();
    assertThat(list.matchesWeakly(ETag.weak("z"))).isFalse();
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", ",", "*, \"a\"", "\"a\", *", "\"a\" \"b\"", "a", "\"a\",b", "\"a", "W/a",
      "\"a\"x", "**"})
  void malformedValuesAreRefused(String value) {
    assertThat(ETagList.parse(List.of(value))).isEmpty();
  }

  @Test
  void valuesBeyondTheBoundsAreRefused() {
    String many = String.join(",", java.util.Collections.nCopies(ETagList.MAX_TAGS + 1, "\"a\""));
    String enough = String.join(",", java.util.Collections.nCopies(ETagList.MAX_TAGS, "\"a\""));
    String long1 = "\"" + "a".repeat(ETagList.MAX_LENGTH) + "\"";

    assertThat(ETagList.parse(List.of(many))).isEmpty();
    assertThat(ETagList.parse(List.of(enough))).isPresent();
    assertThat(ETagList.parse(List.of(long1))).isEmpty();
    assertThat(ETagList.parse(List.of())).isEmpty();
  }
}
