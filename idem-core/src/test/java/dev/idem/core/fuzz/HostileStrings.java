package dev.idem.core.fuzz;

import dev.idem.core.IdempotencyKey;
import java.util.List;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Tuple;

/**
 * Generators of hostile text for header-like values: control characters, DEL, non-ASCII, lone surrogates,
 * whitespace, lengths around the 255-character key limit and far beyond, and valid keys with one thing changed.
 */
public final class HostileStrings {
  /** One of each kind of character a header parser must not trust. */
  private static final List<Character> NASTY = ("\u0000\t\n\r\u000b\u001f \"\\,;=\u007f\u0080\u00a0\u00e9\u00ff"
      + "\u0130\u0131\u017f\u2028\u212a\ufeff\uff10\uffff\ud800\udc00\ud83d\ude00").chars().mapToObj(c -> (char) c)
      .collect(Collectors.toList());

  private HostileStrings() {}

  /** Visible ASCII (0x21 to 0x7E), 1 to 255 characters: valid keys, often at the length limit. */
  public static Arbitrary<String> validKeys() {
    return Arbitraries.oneOf(
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(40),
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(240).ofMaxLength(IdempotencyKey.MAX_LENGTH),
        Arbitraries.create(() -> java.util.UUID.randomUUID().toString()));
  }

  /** A character that a valid key never holds. */
  public static Arbitrary<Character> invalidKeyChars() {
    return Arbitraries.oneOf(
        Arbitraries.of(NASTY).filter(c -> c < 0x21 || c > 0x7E),
        Arbitraries.chars().range('\u0000', '\u0020'),
        Arbitraries.chars().range('\u007f', '\uffff'));
  }

  /** Anything a client could put in an Idempotency-Key, valid or hostile. */
  public static Arbitrary<String> keys() {
    Arbitrary<String> nastyMix = Arbitraries.oneOf(
            Arbitraries.of(NASTY).map(String::valueOf),
            Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(8))
        .list().ofMaxSize(12).map(parts -> String.join("", parts));
    return Arbitraries.frequencyOf(
        Tuple.of(4, validKeys()),
        Tuple.of(3, nearValid()),
        Tuple.of(3, nastyMix),
        Tuple.of(2, Arbitraries.strings().all().ofMaxLength(40)),
        Tuple.of(1, Arbitraries.strings().withCharRange('!', '~').ofMinLength(250).ofMaxLength(270)),
        Tuple.of(1, Arbitraries.strings().withCharRange(' ', '\u00ff').ofMinLength(256).ofMaxLength(10_000)),
        Tuple.of(1, Arbitraries.of("", " ", "\"\"", "\"", "\\", "\"a\"", "\"a\\\"\"", "a b", "a,b", "a\u0000")));
  }

  /** A valid key with one character replaced, inserted or removed, or with whitespace around it. */
  public static Arbitrary<String> nearValid() {
    return Arbitraries.lazy(() -> validKeys()).flatMap(valid -> Arbitraries.integers().between(0, valid.length() - 1)
        .flatMap(at -> invalidKeyChars().flatMap(c -> Arbitraries.of(
            valid.substring(0, at) + c + valid.substring(at + 1),
            valid.substring(0, at) + c + valid.substring(at),
            valid.substring(0, at) + valid.substring(at + 1),
            " " + valid,
            valid + "\t",
            valid + valid.charAt(at)))));
  }
}
