package dev.idem.core.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** {@link IdemHeaders#attempt}: the one reading of {@code Idempotency-Attempt}. */
class IdemHeadersTest {

  @Test
  void anAttemptIsADecimalNumberFromOneToAThousandWithWhitespaceAroundIgnored() {
    assertThat(IdemHeaders.attempt("3")).hasValue(3);
    assertThat(IdemHeaders.attempt(" 12\t")).hasValue(12);
    assertThat(IdemHeaders.attempt("0042")).hasValue(42);
    assertThat(IdemHeaders.attempt("1000")).hasValue(1000);
    assertThat(IdemHeaders.attempt("0000000000001")).as("leading zeros").hasValue(1);
  }

  @Test
  void anythingElseIsNoAttempt() {
    assertThat(IdemHeaders.attempt(null)).isEmpty();
    assertThat(IdemHeaders.attempt("")).isEmpty();
    assertThat(IdemHeaders.attempt("   ")).isEmpty();
    assertThat(IdemHeaders.attempt("0")).isEmpty();
    assertThat(IdemHeaders.attempt("1001")).isEmpty();
    assertThat(IdemHeaders.attempt("-1")).isEmpty();
    assertThat(IdemHeaders.attempt("+1")).isEmpty();
    assertThat(IdemHeaders.attempt("1e3")).isEmpty();
    assertThat(IdemHeaders.attempt("2; DROP")).isEmpty();
    assertThat(IdemHeaders.attempt("1 2")).isEmpty();
    assertThat(IdemHeaders.attempt("9".repeat(40))).as("no overflow").isEqualTo(OptionalInt.empty());
    assertThat(IdemHeaders.attempt("\u0663")).as("decimal digits of other scripts").isEmpty();
  }
}
