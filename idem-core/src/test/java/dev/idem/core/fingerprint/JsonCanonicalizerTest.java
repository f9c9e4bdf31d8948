package dev.idem.core.fingerprint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.internal.json.JsonTrees;
import dev.idem.core.internal.json.JsonWriter;
import dev.idem.core.internal.json.ReferenceNumbers;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JsonCanonicalizerTest {

  /** RFC 8785 section 3.2.2: whitespace, number spelling, string escapes and literals. */
  @Test
  void rfc8785Section322Example() {
    String input = "{\n"
        + "  \"numbers\": [333333333.33333329, 1E30, 4.50,\n"
        + "              2e-3, 0.000000000000000000000000001],\n"
        + "  \"string\": \"\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\\"\\/\",\n"
        + "  \"literals\": [null, true, false]\n"
        + "}";

    String canonical = JsonCanonicalizer.canonicalize(input);

    assertThat(canonical).isEqualTo(
        "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],"
            + "\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}");
  }

  /** RFC 8785 section 3.2.3: member names sort by UTF-16 code units, so the emoji comes before U+FB33. */
  @Test
  void rfc8785Section323SortingExample() {
    String input = "{\n"
        + "  \"\\u20ac\": \"Euro Sign\",\n"
        + "  \"\\r\": \"Carriage Return\",\n"
        + "  \"\\ufb33\": \"Hebrew Letter Dalet With Dagesh\",\n"
        + "  \"1\": \"One\",\n"
        + "  \"\\ud83d\\ude00\": \"Emoji: Grinning Face\",\n"
        + "  \"\\u0080\": \"Control\",\n"
        + "  \"\\u00f6\": \"Latin Small Letter O With Diaeresis\"\n"
        + "}";

    String canonical = JsonCanonicalizer.canonicalize(input);

    assertThat(canonical).isEqualTo("{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\","
        + "\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\","
        + "\"\uFB33\":\"Hebrew Letter Dalet With Dagesh\"}");
  }

  @Test
  void sortsRawUtf8NamesByUtf16CodeUnitsToo() {
    String input = "{\"\uFB33\":1,\"😀\":2,\"\uE000\":3,\"\uD7FF\":4,\"\uFFFF\":5,\"\uD834\uDD1E\":6}";

    String canonical = JsonCanonicalizer.canonicalize(input);

    assertThat(canonical).isEqualTo("{\"\uD7FF\":4,\"\uD834\uDD1E\":6,\"😀\":2,\"\uE000\":3,\"\uFB33\":1,\"\uFFFF\":5}");
  }

  @Test
  void sortsNamesThatShareLongPrefixes() {
    String input = "{\"abcde\":1,\"abc\":2,\"abcd\":3,\"ab\":4,\"abd\":5,\"\":6,\"b\":7,\"abcdA\":8,\"abcdé\":9,\"abc\\u0064f\":10}";

    String canonical = JsonCanonicalizer.canonicalize(input);

    assertThat(canonical).isEqualTo(
        "{\"\":6,\"ab\":4,\"abc\":2,\"abcd\":3,\"abcdA\":8,\"abcde\":1,\"abcdf\":10,\"abcdé\":9,\"abd\":5,\"b\":7}");
    assertThatThrownBy(() -> JsonCanonicalizer.canonicalize("{\"abcdX\":1,\"abcdY\":2,\"abcdX\":3}"))
        .isInstanceOf(MalformedJsonException.class).hasMessageContaining("duplicate member name \"abcdX\"");
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(delimiter = '|', value = {
    "1 | 1", "1.0 | 1", "1e0 | 1", "10e-1 | 1", "-0 | 0", "-0.0e5 | 0", "1E+2 | 100", "0.1e1 | 1", "100e-2 | 1",
    "1e21 | 1e+21", "1e20 | 100000000000000000000", "0.0000001 | 1e-7", "0.000001 | 0.000001", "-1.50 | -1.5",
    "123456789012345678 | 123456789012345680", "1.7976931348623157e308 | 1.7976931348623157e+308",
    "4.9e-324 | 5e-324", "2.5e-324 | 5e-324", "1e-400 | 0", "0.30000000000000004 | 0.30000000000000004",
    "9007199254740993 | 9007199254740992", "1e-306 | 1e-306", "1e-310 | 1e-310",
    "999999999999999.9 | 999999999999999.9", "1000000000000000000000000 | 1e+24", "12345e-10 | 0.0000012345",
  })
  void canonicalizesNumberSpellings(String input, String expected) {
    String canonical = JsonCanonicalizer.canonicalize("[" + input + "]");

    assertThat(canonical).isEqualTo("[" + expected + "]");
  }

  @Test
  void escapesOnlyWhatRfc8785Escapes() {
    String input = "[\"\\u0000\\u0008\\u0009\\u000a\\u000b\\u000c\\u000d\\u001f\\u0020\\u007f\\u0080\\u2028\\/\\\"\\\\\"]";

    String canonical = JsonCanonicalizer.canonicalize(input);

    assertThat(canonical).isEqualTo("[\"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f \u007f\u0080\u2028/\\\"\\\\\"]");
  }

  @Test
  void keepsScalarRootsAndEmptyContainers() {
    assertThat(JsonCanonicalizer.canonicalize(" 1.50 ")).isEqualTo("1.5");
    assertThat(JsonCanonicalizer.canonicalize("\"\\u00e9\"")).isEqualTo("\"é\"");
    assertThat(JsonCanonicalizer.canonicalize("{ }")).isEqualTo("{}");
    assertThat(JsonCanonicalizer.canonicalize("[ [ ] , { } ]")).isEqualTo("[[],{}]");
  }

  @Test
  void byteAndStringFormsAgree() {
    byte[] utf8 = "{\"b\": \"é\", \"a\": 1.0}".getBytes(StandardCharsets.UTF_8);

    byte[] canonical = JsonCanonicalizer.canonicalize(utf8);

    assertThat(new String(canonical, StandardCharsets.UTF_8)).isEqualTo("{\"a\":1,\"b\":\"é\"}");
  }

  @Test
  void rejectsInvalidInputWithPosition() {
    assertThatThrownBy(() -> JsonCanonicalizer.canonicalize("{\"a\":1,\"a\":1}"))
        .isInstanceOf(MalformedJsonException.class)
        .hasMessage("malformed JSON at line 1, column 8 (byte offset 7): duplicate member name \"a\" (first at line 1, "
            + "column 2); I-JSON requires unique names");
  }

  @Property(tries = 500)
  void canonicalizationIsIdempotent(@ForAll("trees") Object tree, @ForAll Random random) {
    String once = JsonCanonicalizer.canonicalize(JsonTrees.spell(tree, random));

    String twice = JsonCanonicalizer.canonicalize(once);

    assertThat(twice).isEqualTo(once);
  }

  @Property(tries = 500)
  void ignoresMemberOrderWhitespaceAndEscapes(@ForAll("trees") Object tree, @ForAll Random random) {
    String first = JsonTrees.spell(tree, random);
    String second = JsonTrees.spell(tree, random);

    String canonical = JsonCanonicalizer.canonicalize(first);

    assertThat(JsonCanonicalizer.canonicalize(second)).isEqualTo(canonical);
    assertThat(canonical).isEqualTo(JsonWriter.write(tree));
  }

  @Property(tries = 1000)
  void everySpellingOfANumberGivesItsShortestForm(@ForAll("doubles") double v) {
    String expected = ReferenceNumbers.toEcmaScript(v);
    List<String> spellings = JsonTrees.numberSpellings(v);

    for (String spelling : spellings) {
      assertThat(JsonCanonicalizer.canonicalize("[" + spelling + "]")).as(spelling).isEqualTo("[" + expected + "]");
    }
    assertThat(Double.parseDouble(expected)).isEqualTo(v == 0 ? 0.0 : v);
  }

  @Property(tries = 300)
  void veryLargeAndSmallExponentsAreHandled(@ForAll("exponents") int exponent, @ForAll("mantissas") String mantissa) {
    String literal = mantissa + "e" + exponent;
    double v = Double.parseDouble(literal);

    if (Double.isInfinite(v)) {
      assertThatThrownBy(() -> JsonCanonicalizer.canonicalize(literal)).isInstanceOf(MalformedJsonException.class)
          .hasMessageContaining("outside the range of an IEEE 754 double");
    } else {
      assertThat(JsonCanonicalizer.canonicalize(literal)).isEqualTo(ReferenceNumbers.toEcmaScript(v));
    }
  }

  @Provide
  Arbitrary<Object> trees() {
    return JsonTrees.values(3);
  }

  @Provide
  Arbitrary<Double> doubles() {
    return JsonTrees.numbers();
  }

  @Provide
  Arbitrary<Integer> exponents() {
    return Arbitraries.oneOf(Arbitraries.integers().between(-400, 400), Arbitraries.integers().between(-340, -300),
        Arbitraries.integers().between(290, 320));
  }

  @Provide
  Arbitrary<String> mantissas() {
    return Arbitraries.oneOf(
        Arbitraries.longs().between(1, 999_999_999_999_999L).map(Object::toString),
        Arbitraries.strings().numeric().ofMinLength(1).ofMaxLength(30).filter(s -> !s.startsWith("0")),
        Arbitraries.longs().between(1, 9_999_999L).map(l -> "0.000" + l));
  }
}
