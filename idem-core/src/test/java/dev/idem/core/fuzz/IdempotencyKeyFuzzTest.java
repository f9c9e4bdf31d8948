package dev.idem.core.fuzz;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.InvalidKeyException;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;

/**
 * Fuzzes {@link IdempotencyKey#of} and {@link IdempotencyKey#fromHeaderValues}: hostile strings never raise anything
 * but {@link InvalidKeyException}, a key is accepted exactly when it is 1 to 255 visible ASCII characters, and an
 * accepted key keeps its value.
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
      assertThat(IdempotencyKey.fromHeaderValues(List.of(candidate))).isEqualTo(key);
    } else {
      assertThat(thrown).isExactlyInstanceOf(InvalidKeyException.class);
      assertThat(thrown.getMessage()).isNotBlank();
    }
  }

  @Property(tries = 5_000)
  void headerValuesOtherThanExactlyOneAreInvalidKeys(@ForAll("headerValues") List<String> values) {
    Throwable thrown = catchThrowable(() -> IdempotencyKey.fromHeaderValues(values));

    if (values.size() == 1 && isValidKey(values.get(0))) {
      assertThat(thrown).isNull();
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
