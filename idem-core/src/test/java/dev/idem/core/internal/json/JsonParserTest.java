package dev.idem.core.internal.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.IdemException;
import dev.idem.core.fingerprint.MalformedJsonException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JsonParserTest {

  @Test
  void buildsTreeOfPlainJavaObjectsInDocumentOrder() {
    Object tree = JsonParser.parse("{\"z\": [1, 2.5, -0, \"x\"], \"a\": {\"t\": true, \"f\": false, \"n\": null}}");

    assertThat(tree).isInstanceOf(LinkedHashMap.class);
    @SuppressWarnings("unchecked")
    Map<String, Object> map = (Map<String, Object>) tree;
    assertThat(map.keySet()).containsExactly("z", "a");
    assertThat(map.get("z")).isEqualTo(List.of(1.0, 2.5, -0.0, "x"));
    assertThat(Double.doubleToRawLongBits((Double) ((List<?>) map.get("z")).get(2))).isEqualTo(Double.doubleToRawLongBits(-0.0));
    Map<?, ?> inner = (Map<?, ?>) map.get("a");
    assertThat(inner.get("t")).isEqualTo(Boolean.TRUE);
    assertThat(inner.get("f")).isEqualTo(Boolean.FALSE);
    assertThat(inner.get("n")).isSameAs(JsonNull.INSTANCE);
    assertThat(inner.get("missing")).isNull();
  }

  @Test
  void treesAreMutable() {
    @SuppressWarnings("unchecked")
    Map<String, Object> map = (Map<String, Object>) JsonParser.parse("{\"a\":[]}");

    map.put("b", 1.0);
    ((List<Object>) map.get("a")).add("x");

    assertThat(JsonWriter.write(map)).isEqualTo("{\"a\":[\"x\"],\"b\":1}");
  }

  @Test
  void readsScalarsAtTheRoot() {
    assertThat(JsonParser.parse(" \"s\" ")).isEqualTo("s");
    assertThat(JsonParser.parse("12")).isEqualTo(12.0);
    assertThat(JsonParser.parse("null")).isSameAs(JsonNull.INSTANCE);
    assertThat(JsonParser.parse("true".getBytes(StandardCharsets.UTF_8))).isEqualTo(true);
  }

  @Test
  void readsNumbersAsTheNearestDouble() {
    assertThat(JsonParser.parse("0.1")).isEqualTo(0.1);
    assertThat(JsonParser.parse("123456789012345678901234567890")).isEqualTo(1.2345678901234568e29);
    assertThat(JsonParser.parse("1E+2")).isEqualTo(100.0);
    assertThat(JsonParser.parse("10e-1")).isEqualTo(1.0);
    assertThat(JsonParser.parse("1.7976931348623157e308")).isEqualTo(Double.MAX_VALUE);
    assertThat(JsonParser.parse("4.9e-324")).isEqualTo(Double.MIN_VALUE);
    assertThat(JsonParser.parse("1e-400")).isEqualTo(0.0);
    assertThat(JsonParser.parse("0.30000000000000004")).isEqualTo(0.1 + 0.2);
    assertThat(JsonParser.parse("123.456e-30")).isEqualTo(123.456e-30);
  }

  @Test
  void decodesEscapesAndSurrogatePairs() {
    Object tree = JsonParser.parse("[\"\\ud83d\\ude00\\u00e9\\n\\/\\\"\\\\\\b\\f\\r\\t\", \"é😀\"]");

    assertThat(tree).isEqualTo(List.of("😀é\n/\"\\\b\f\r\t", "é😀"));
  }

  @Test
  void reportsLineColumnAndOffsetOfASyntaxError() {
    MalformedJsonException e = malformed(() -> JsonParser.parse("{\n  \"a\": 1,\n  \"b\" 2\n}"));

    assertThat(e.line()).isEqualTo(3);
    assertThat(e.column()).isEqualTo(7);
    assertThat(e.offset()).isEqualTo(18);
    assertThat(e.reason()).isEqualTo("unexpected character '2': expected ':' after member name");
    assertThat(e).isInstanceOf(IdemException.class)
        .hasMessage("malformed JSON at line 3, column 7 (byte offset 18): unexpected character '2': expected ':' after member name");
  }

  @Test
  void countsColumnsInCodePointsAndOffsetsInBytes() {
    MalformedJsonException e = malformed(() -> JsonParser.parse("[\"é😀\", tru]"));

    assertThat(e.line()).isEqualTo(1);
    assertThat(e.column()).isEqualTo(8);
    assertThat(e.offset()).isEqualTo(11);
    assertThat(e.reason()).contains("expected 'true'");
  }

  @Test
  void countsLinesAfterCarriageReturnLineFeed() {
    MalformedJsonException e = malformed(() -> JsonParser.parse("[1,\r\n x]"));

    assertThat(e.line()).isEqualTo(2);
    assertThat(e.column()).isEqualTo(2);
    assertThat(e.reason()).contains("character 'x'");
  }

  @Test
  void rejectsDuplicateMemberNamesNamingBothPlaces() {
    MalformedJsonException e = malformed(() -> JsonParser.parse("{\"a\": 1,\n \"a\": 2}"));

    assertThat(e.line()).isEqualTo(2);
    assertThat(e.column()).isEqualTo(2);
    assertThat(e.reason()).isEqualTo("duplicate member name \"a\" (first at line 1, column 2); I-JSON requires unique names");
  }

  @Test
  void rejectsDuplicatesSpelledDifferently() {
    assertThat(malformed(() -> JsonParser.parse("{\"a\": 1, \"\\u0061\": 2}")).reason()).startsWith("duplicate member name \"a\"");
    assertThat(malformed(() -> JsonParser.parse("{\"é\": 1, \"\\u00E9\": 2}")).reason()).startsWith("duplicate member name \"é\"");
  }

  @Test
  void rejectsDuplicatesInLargeAndNestedObjects() {
    StringBuilder sb = new StringBuilder("{\"outer\": {");
    for (int i = 0; i < 40; i++) {
      sb.append("\"m").append(i).append("\": ").append(i).append(", ");
    }
    sb.append("\"m17\": 0}}");

    MalformedJsonException e = malformed(() -> JsonParser.parse(sb.toString()));

    assertThat(e.reason()).startsWith("duplicate member name \"m17\"");
    assertThat(e.offset()).isEqualTo(sb.lastIndexOf("\"m17\""));
  }

  @Test
  void acceptsSameNameInDifferentObjects() {
    Object tree = JsonParser.parse("{\"a\": {\"a\": 1}, \"b\": [{\"a\": 1}, {\"a\": 2}]}");

    assertThat(JsonWriter.write(tree)).isEqualTo("{\"a\":{\"a\":1},\"b\":[{\"a\":1},{\"a\":2}]}");
  }

  @ParameterizedTest
  @ValueSource(strings = {"[\"\\ud800\"]", "[\"\\ud800x\"]", "[\"\\ud800\\u0041\"]", "[\"\\udc00\"]", "[\"\\ude00\\ud83d\"]",
      "[\"\\ud83d\\ud83d\"]"})
  void rejectsEscapedLoneSurrogates(String json) {
    MalformedJsonException e = malformed(() -> JsonParser.parse(json));

    assertThat(e.reason()).startsWith("lone surrogate \\u");
    assertThat(e.offset()).isEqualTo(2);
  }

  @Test
  void rejectsLoneSurrogateEncodedInUtf8() {
    byte[] bytes = {'[', '"', (byte) 0xED, (byte) 0xA0, (byte) 0x80, '"', ']'};

    MalformedJsonException e = malformed(() -> JsonParser.parse(bytes));

    assertThat(e.reason()).startsWith("lone surrogate U+D800 encoded in UTF-8");
    assertThat(e.offset()).isEqualTo(2);
  }

  @Test
  void rejectsLoneSurrogateInAJavaString() {
    MalformedJsonException e = malformed(() -> JsonParser.parse("{\"k\": \"x\uD800y\"}"));

    assertThat(e.reason()).startsWith("lone surrogate U+D800");
    assertThat(e.column()).isEqualTo(9);
  }

  @ParameterizedTest
  @ValueSource(strings = {"C0 80", "E0 80 80", "F5 80 80 80", "F4 90 80 80", "E2 82", "80", "C3 28", "FF"})
  void rejectsInvalidUtf8InStrings(String hex) {
    byte[] seq = java.util.HexFormat.ofDelimiter(" ").parseHex(hex);
    byte[] json = new byte[seq.length + 4];
    json[0] = '[';
    json[1] = '"';
    System.arraycopy(seq, 0, json, 2, seq.length);
    json[seq.length + 2] = '"';
    json[seq.length + 3] = ']';

    MalformedJsonException e = malformed(() -> JsonParser.parse(json));

    assertThat(e.reason()).contains("UTF-8");
    assertThat(e.offset()).isEqualTo(2);
  }

  @Test
  void enforcesTheDefaultDepthLimitOf256() {
    String ok = "[".repeat(256) + "]".repeat(256);
    String tooDeep = "[".repeat(257) + "]".repeat(257);
    String objects = "{\"a\":".repeat(257) + "1" + "}".repeat(257);

    assertThat(JsonParser.parse(ok)).isInstanceOf(List.class);
    MalformedJsonException e = malformed(() -> JsonParser.parse(tooDeep));
    assertThat(e.reason()).isEqualTo("nesting deeper than 256 levels of objects and arrays");
    assertThat(e.offset()).isEqualTo(256);
    assertThat(malformed(() -> JsonParser.parse(objects)).reason()).startsWith("nesting deeper than 256");
  }

  @Test
  void enforcesACustomDepthLimit() {
    byte[] three = "{\"a\":[{}]}".getBytes(StandardCharsets.UTF_8);

    assertThat(JsonParser.parse(three, 3)).isInstanceOf(Map.class);
    assertThat(malformed(() -> JsonParser.parse(three, 2)).reason()).startsWith("nesting deeper than 2 levels");
  }

  @ParameterizedTest
  @ValueSource(strings = {"1e400", "-1e400", "1.8e308", "2e308", "0.001e312"})
  void rejectsNumbersOutsideDoubleRange(String number) {
    MalformedJsonException e = malformed(() -> JsonParser.parse("[" + number + "]"));

    assertThat(e.reason()).isEqualTo("number " + number + " is outside the range of an IEEE 754 double (I-JSON)");
    assertThat(e.offset()).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"01", "-01", "1.", "1.e5", ".5", "+1", "-", "1e", "1e+", "0x10", "NaN", "Infinity", "-Infinity",
      "1_000"})
  void rejectsMalformedNumbers(String number) {
    assertThatThrownBy(() -> JsonParser.parse("[" + number + "]")).isInstanceOf(MalformedJsonException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"{} {}", "1 2", "[1]]", "\"a\" x", "truex", "null,"})
  void rejectsTrailingText(String json) {
    assertThat(malformed(() -> JsonParser.parse(json)).reason()).endsWith("after the JSON value");
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\n\t"})
  void rejectsEmptyDocuments(String json) {
    assertThat(malformed(() -> JsonParser.parse(json)).reason()).isEqualTo("empty document: expected a JSON value");
  }

  @ParameterizedTest
  @ValueSource(strings = {"[1,]", "{\"a\":1,}", "{a:1}", "{\"a\"}", "{\"a\":}", "[", "{", "{\"a\":1", "['a']", "nul",
      "[\"a\tb\"]", "[\"\\x\"]", "[\"\\u12G4\"]", "[\"\\u12\"]", "[\"abc", "\uFEFF{}", "[1\u00a0]", "[1\f]", "{,}", "[,1]"})
  void rejectsSyntaxErrors(String json) {
    assertThatThrownBy(() -> JsonParser.parse(json)).isInstanceOf(MalformedJsonException.class);
  }

  @Test
  void namesTheControlCharacterThatMustBeEscaped() {
    assertThat(malformed(() -> JsonParser.parse("[\"a\tb\"]")).reason())
        .isEqualTo("control character U+0009 in a string must be escaped");
  }

  @Test
  void namesAnUnterminatedString() {
    MalformedJsonException e = malformed(() -> JsonParser.parse("[\"abc"));

    assertThat(e.reason()).isEqualTo("unterminated string (opened at byte offset 1)");
    assertThat(e.offset()).isEqualTo(5);
  }

  @Test
  void findsSpecialBytesAtEveryPositionOfLongStrings() {
    for (int at = 0; at < 40; at++) {
      String before = "a".repeat(at);
      String after = "b".repeat(40 - at);
      for (char plain : new char[] {' ', '!', '#', '[', ']', '~', '\u007f', 'é'}) {
        String value = before + plain + after;
        assertThat(JsonParser.parse("[\"" + value + "\"]")).as("plain %s at %d", plain, at).isEqualTo(List.of(value));
      }
      assertThat(JsonParser.parse("[\"" + before + "\\n\\\"" + after + "\"]")).isEqualTo(List.of(before + "\n\"" + after));
      assertThat(JsonParser.parse("[\"" + before + "😀" + after + "\"]")).isEqualTo(List.of(before + "😀" + after));
      for (char control : new char[] {'\u0000', '\u0001', '\u001f', '\t'}) {
        String json = "[\"" + before + control + after + "\"]";
        assertThat(malformed(() -> JsonParser.parse(json)).offset()).as("control at %d", at).isEqualTo(2 + at);
      }
      String unterminated = "[\"" + before + after;
      assertThat(malformed(() -> JsonParser.parse(unterminated)).reason()).startsWith("unterminated string");
    }
  }

  private static MalformedJsonException malformed(ThrowingCallable call) {
    Throwable t = org.assertj.core.api.Assertions.catchThrowable(call);
    assertThat(t).isInstanceOf(MalformedJsonException.class);
    return (MalformedJsonException) t;
  }
}
