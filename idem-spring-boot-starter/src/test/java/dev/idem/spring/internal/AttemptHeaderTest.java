package dev.idem.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** {@link AttemptHeader}: the one reading of {@code Idempotency-Attempt}, for the MDC and for the span. */
class AttemptHeaderTest {

  @Test
  void anAttemptIsADecimalNumberFromOneToAThousandWithWhitespaceAroundIgnored() {
    assertThat(AttemptHeader.parse("3")).hasValue(3);
    assertThat(AttemptHeader.parse(" 12\t")).hasValue(12);
    assertThat(AttemptHeader.parse("0042")).hasValue(42);
    assertThat(AttemptHeader.parse("1000")).hasValue(1000);
    assertThat(AttemptHeader.parse("0000000000001")).as("leading zeros").hasValue(1);
  }

  @Test
  void anythingElseIsNoAttempt() {
    assertThat(AttemptHeader.parse(null)).isEmpty();
    assertThat(AttemptHeader.parse("")).isEmpty();
    assertThat(AttemptHeader.parse("   ")).isEmpty();
    assertThat(AttemptHeader.parse("0")).isEmpty();
    assertThat(AttemptHeader.parse("1001")).isEmpty();
    assertThat(AttemptHeader.parse("-1")).isEmpty();
    assertThat(AttemptHeader.parse("+1")).isEmpty();
    assertThat(AttemptHeader.parse("1e3")).isEmpty();
    assertThat(AttemptHeader.parse("2; DROP")).isEmpty();
    assertThat(AttemptHeader.parse("1 2")).isEmpty();
    assertThat(AttemptHeader.parse("9".repeat(40))).as("no overflow").isEqualTo(OptionalInt.empty());
    assertThat(AttemptHeader.parse("\u0663")).as("decimal digits of other scripts").isEmpty();
  }
}
