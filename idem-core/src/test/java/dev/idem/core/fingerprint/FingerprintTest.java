package dev.idem.core.fingerprint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static dev.idem.core.fingerprint.FingerprinterTest.utf8;

import java.util.Map;
import org.junit.jupiter.api.Test;

class FingerprintTest {
  private static final String OPERATION = "POST /payments";
  private final Fingerprinter fingerprinter = Fingerprinter.ofDefaults();

  @Test
  void differingFieldsNamesChangedAddedAndRemovedMembersSorted() {
    Fingerprint first = fingerprinter.fingerprint(OPERATION, utf8("{\"amount\": 5, \"currency\": \"EUR\", \"memo\": \"a\", \"x\": 1}"), null);
    Fingerprint second = fingerprinter.fingerprint(OPERATION, utf8("{\"x\": 1.0, \"currency\": \"USD\", \"amount\": 5, \"tip\": 1}"), null);

    assertThat(first.matches(second)).isFalse();
    assertThat(first.differingFields(second)).containsExactly("currency", "memo", "tip");
    assertThat(second.differingFields(first)).containsExactly("currency", "memo", "tip");
  }

  @Test
  void differingFieldsIsEmptyWhenEitherSideHasNoFieldHashes() {
    Fingerprint json = fingerprinter.fingerprint(OPERATION, utf8("{\"a\": 1}"), null);
    Fingerprint raw = fingerprinter.fingerprint(OPERATION, utf8("a=1"), "text/plain");

    assertThat(json.differingFields(raw)).isEmpty();
    assertThat(raw.differingFields(json)).isEmpty();
    assertThat(json.differingFields(Fingerprint.ofHash(json.hash()))).isEmpty();
  }

  @Test
  void matchesComparesOnlyTheOverallHash() {
    Fingerprint full = fingerprinter.fingerprint(OPERATION, utf8("{\"a\": 1}"), null);

    assertThat(full.matches(Fingerprint.ofHash(full.hash()))).isTrue();
    assertThat(full.differingFields(full)).isEmpty();
  }

  @Test
  void validatesItsParts() {
    assertThatThrownBy(() -> Fingerprint.ofHash("abc")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("fingerprint hash must be 64 hex characters, got 3");
    assertThat(new Fingerprint("0".repeat(64), Map.of("b", "2", "a", "1")).sortedFieldHashes().keySet())
        .containsExactly("a", "b");
  }
}
