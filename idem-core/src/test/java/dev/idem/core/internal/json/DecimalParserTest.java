package dev.idem.core.internal.json;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class DecimalParserTest {

  @Test
  void decidesCommonValuesExactly() {
    assertThat(DecimalParser.tryToDouble(30000000000000004L, -17, false)).isEqualTo(0.30000000000000004);
    assertThat(DecimalParser.tryToDouble(9007199254740994L, 0, false)).isEqualTo(9007199254740994.0);
    assertThat(DecimalParser.tryToDouble(90071992547409931L, -1, false)).isEqualTo(9007199254740994.0);
    assertThat(DecimalParser.tryToDouble(17976931348623157L, 292, false)).isEqualTo(Double.MAX_VALUE);
    assertThat(DecimalParser.tryToDouble(22250738585072014L, -324, false)).isEqualTo(Double.MIN_NORMAL);
    assertThat(DecimalParser.tryToDouble(15, -1, true)).isEqualTo(-1.5);
    assertThat(Double.doubleToRawLongBits(DecimalParser.tryToDouble(0, 5, true))).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void declinesWhatItCannotDecide() {
    assertThat(DecimalParser.tryToDouble(5, -324, false)).as("subnormal").isNaN();
    assertThat(DecimalParser.tryToDouble(1, 400, false)).as("overflow").isNaN();
    assertThat(DecimalParser.tryToDouble(18, 307, false)).as("beyond MAX_VALUE").isNaN();
    assertThat(DecimalParser.tryToDouble(9007199254740993L, 0, false)).as("exactly halfway").isNaN();
  }

  @Test
  void agreesWithParseDoubleOnSeededRandomDecimals() {
    Random random = new Random(7493);
    int decided = 0;
    for (int i = 0; i < 100_000; i++) {
      long digits = random.nextLong() >>> (1 + random.nextInt(60));
      int exponent = random.nextInt(700) - 350;

      double fast = DecimalParser.tryToDouble(digits, exponent, false);

      if (!Double.isNaN(fast)) {
        decided++;
        assertThat(fast).as("%de%d", digits, exponent).isEqualTo(Double.parseDouble(digits + "e" + exponent));
      }
    }
    assertThat(decided).isGreaterThan(80_000);
  }

  @Property(tries = 3000)
  void readsBackEveryDoubleFromItsSeventeenDigits(@ForAll("finite") double v) {
    BigDecimal d = new BigDecimal(v).round(new MathContext(17));

    double fast = DecimalParser.tryToDouble(d.unscaledValue().longValueExact(), -d.scale(), false);

    // NaN means "undecided": the fast path declines (subnormals, and the rare exact-halfway ambiguity of
    // Eisel-Lemire) and the caller parses the text instead, which must then give v.
    double read = Double.isNaN(fast) ? Double.parseDouble(d.toString()) : fast;
    assertThat(read).isEqualTo(v);
  }

  @Provide
  Arbitrary<Double> finite() {
    return Arbitraries.longs().between(1, 0x7FEF_FFFF_FFFF_FFFFL).map(Double::longBitsToDouble);
  }
}
