package dev.idem.core.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.InvalidKeyException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;

/**
 * Fuzzes {@link IdempotencyKey#of} and {@link IdempotencyKey#fromHeaderValues}: hostile strings never raise anything
 * but {@link InvalidKeyException}, a key is accepted exactly when it is 1 to 255 visible ASCII characters, and an
 * accepted key keeps its value. Header values are judged against {@link #expectedKey}, a reading of RFC 8941's
 * string grammar by regular expressions, written apart from the parser.
 */
@AddLifecycleHook(FuzzTries.class)
class IdempotencyKeyFuzzTest {
  @Property(tries = 30_000)
  void acceptsExactlyVisibleAsciiUpTo255AndKeepsTheValue(@ForAll("hostileKeys") String candidate) {
    Throwable thrown = catchThrowable(() -> IdempotencyKey.of(candidate));

    if (isValidKey(candidate)) {
      assertThat(thrown).isNull();
      IdempotencyKey key = IdempotencyKey.of(candidate);
      assertThat(key.value()).isEqualTo(candidate);
      assertThat(key.toString()).isEqualTo(candidate);
      assertThat(IdempotencyKey.of(key.value())).isEqualTo(key).hasSameHashCodeAs(key);
      if (expectedKey(candidate) != null) {
        assertThat(IdempotencyKey.fromHeaderValues(List.of(candidate)))
            .isEqualTo(IdempotencyKey.of(expectedKey(candidate)));
      }
    } else {
      assertThat(thrown).isExactlyInstanceOf(InvalidKeyException.class);
      assertThat(thrown.getMessage()).isNotBlank();
    }
  }

  @Property(tries = 5_000)
  void headerValuesOtherThanExactlyOneAreInvalidKeys(@ForAll("headerValues") List<String> values) {
    Throwable thrown = catchThrowable(() -> IdempotencyKey.fromHeaderValues(values));

    if (values.size() == 1 && expectedKey(values.get(0)) != null) {
      assertThat(thrown).isNull();
      assertThat(IdempotencyKey.fromHeaderValues(values).value()).isEqualTo(expectedKey(values.get(0)));
    } else {
      assertThat(thrown).isExactlyInstanceOf(InvalidKeyException.class);
    }
  }

  @Property(tries = 5_000)
  void aKeyWithOneHostileCharacterIsInvalid(@ForAll("validKeys") String valid, @ForAll("hostileChars") char c,
      @ForAll("positions") double where) {
    int at = (int) (where * valid.length());
    String mutated = valid.substring(0, at) + c + valid.substring(Math.min(valid.length(), at + 1));

    assertThatThrownBy(() -> IdempotencyKey.of(mutated)).isExactlyInstanceOf(InvalidKeyException.class);
  }

  @Property(tries = 20_000)
  void aHeaderValueIsReadAsRfc8941SaysOrRefused(@ForAll("structuredValues") String value) {
    Throwable thrown = catchThrowable(() -> IdempotencyKey.fromHeader(value));

    String expected = expectedKey(value);
    if (expected == null) {
      assertThat(thrown).as("refused: %s", value).isExactlyInstanceOf(InvalidKeyException.class);
    } else {
      assertThat(thrown).as("accepted: %s", value).isNull();
      assertThat(IdempotencyKey.fromHeader(value).value()).isEqualTo(expected);
    }
  }

  @Property(tries = 5_000)
  void theQuotedAndTheBareFormOfAKeyAreOneKeyAndParametersAreRefused(@ForAll("validKeys") String key,
      @ForAll("parameters") String parameters) {
    String quoted = '"' + key.replace("\\", "\\\\").replace("\"", "\\\"") + '"';

    assertThat(IdempotencyKey.fromHeader(quoted).value()).isEqualTo(key);
    assertThat(IdempotencyKey.fromHeader(IdempotencyKey.of(key).headerValue()).value()).isEqualTo(key);
    assertThatThrownBy(() -> IdempotencyKey.fromHeader(quoted + parameters))
        .isExactlyInstanceOf(InvalidKeyException.class).hasMessageContaining("parameters are not accepted");
    if (key.chars().noneMatch(c -> c == '"' || c == ';' || c == ',')) {
      assertThat(IdempotencyKey.fromHeader(key)).isEqualTo(IdempotencyKey.fromHeader(quoted));
      assertThatThrownBy(() -> IdempotencyKey.fromHeader(key + parameters))
          .isExactlyInstanceOf(InvalidKeyException.class).hasMessageContaining("parameters are not accepted");
    }
  }

  /** RFC 8941 section 3.3.3: a string, in quotes, of printable ASCII where only \" and \\ are escaped. */
  private static final Pattern QUOTED =
      Pattern.compile(" *\"((?:[\\x20\\x21\\x23-\\x5B\\x5D-\\x7E]|\\\\[\"\\\\])*)\" *");
  /** A bare key: visible ASCII but for the three characters that would make it a string, a parameter or a list. */
  private static final Pattern BARE = Pattern.compile(" *([\\x21\\x23-\\x2B\\x2D-\\x3A\\x3C-\\x7E]*) *");
  private static final Pattern ESCAPE = Pattern.compile("\\\\([\"\\\\])");

  /** The key a field value names, or null when it must be refused. */
  static String expectedKey(String value) {
    Matcher quoted = QUOTED.matcher(value);
    Matcher bare = BARE.matcher(value);
    String key;
    if (quoted.matches()) {
      key = ESCAPE.matcher(quoted.group(1)).replaceAll("$1");
    } else if (bare.matches()) {
      key = bare.group(1);
    } else {
      return null;
    }
    return isValidKey(key) ? key : null;
  }

  @Provide
  Arbitrary<String> structuredValues() {
    Arbitrary<String> soup = Arbitraries.strings().withChars("\"\\;,= aK7\u0000\u00e9\t").ofMaxLength(12);
    return Arbitraries.oneOf(soup, soup.map(s -> '"' + s + '"'), soup.map(s -> '"' + s),
        HostileStrings.validKeys().map(k -> '"' + k + '"'), HostileStrings.validKeys(), HostileStrings.keys());
  }

  @Provide
  Arbitrary<String> parameters() {
    return Arbitraries.of(";p=1", ";p", ";a=\"x\";b=?0", "; p=1", ";", ";*x=tok");
  }

  static boolean isValidKey(String s) {
    return s != null && !s.isEmpty() && s.length() <= IdempotencyKey.MAX_LENGTH
        && s.chars().allMatch(c -> c >= 0x21 && c <= 0x7E);
  }

  @Provide
  Arbitrary<String> hostileKeys() {
    return HostileStrings.keys();
  }

  @Provide
  Arbitrary<String> validKeys() {
    return HostileStrings.validKeys();
  }

  @Provide
  Arbitrary<Character> hostileChars() {
    return HostileStrings.invalidKeyChars();
  }

  @Provide
  Arbitrary<Double> positions() {
    return Arbitraries.doubles().between(0, 1).withSpecialValue(0.0).withSpecialValue(0.999);
  }

  @Provide
  Arbitrary<List<String>> headerValues() {
    return HostileStrings.keys().list().ofMaxSize(3);
  }
}
