package dev.idem.core.internal.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EcmaNumbersTest {

  /** RFC 8785 Appendix B: IEEE 754 bit patterns and their ECMAScript (and so canonical JSON) spelling. */
  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({
    "0000000000000000, 0",
    "8000000000000000, 0",
    "0000000000000001, 5e-324",
    "8000000000000001, -5e-324",
    "7fefffffffffffff, 1.7976931348623157e+308",
    "ffefffffffffffff, -1.7976931348623157e+308",
    "4340000000000000, 9007199254740992",
    "c340000000000000, -9007199254740992",
    "4430000000000000, 295147905179352830000",
    "44b52d02c7e14af5, 9.999999999999997e+22",
    "44b52d02c7e14af6, 1e+23",
    "44b52d02c7e14af7, 1.0000000000000001e+23",
    "444b1ae4d6e2ef4e, 999999999999999700000",
    "444b1ae4d6e2ef4f, 999999999999999900000",
    "444b1ae4d6e2ef50, 1e+21",
    "3eb0c6f7a0b5ed8c, 9.999999999999997e-7",
    "3eb0c6f7a0b5ed8d, 0.000001",
    "41b3de4355555553, 333333333.3333332",
    "41b3de4355555554, 333333333.33333325",
    "41b3de4355555555, 333333333.3333333",
    "41b3de4355555556, 333333333.3333334",
    "41b3de4355555557, 333333333.33333343",
    "becbf647612f3696, -0.0000033333333333333333",
    "43143ff3c1cb0959, 1424953923781206.2",
  })
  void rfc8785AppendixBSamples(String hex, String expected) {
    double v = Double.longBitsToDouble(Long.parseUnsignedLong(hex, 16));

    String written = EcmaNumbers.toString(v);

    assertThat(written).isEqualTo(expected);
    assertThat(ReferenceNumbers.toEcmaScript(v)).isEqualTo(expected);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"7ff0000000000000", "fff0000000000000", "7ff8000000000000", "7ff0000000000001"})
  void rfc8785AppendixBRejectsNanAndInfinity(String hex) {
    double v = Double.longBitsToDouble(Long.parseUnsignedLong(hex, 16));

    assertThatThrownBy(() -> EcmaNumbers.toString(v))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NaN and Infinity");
  }

  @Test
  void switchesToExponentNotationAt1e21And1eMinus7() {
    assertThat(EcmaNumbers.toString(1e20)).isEqualTo("100000000000000000000");
    assertThat(EcmaNumbers.toString(1e21)).isEqualTo("1e+21");
    assertThat(EcmaNumbers.toString(1.5e21)).isEqualTo("1.5e+21");
    assertThat(EcmaNumbers.toString(1e-6)).isEqualTo("0.000001");
    assertThat(EcmaNumbers.toString(1.5e-6)).isEqualTo("0.0000015");
    assertThat(EcmaNumbers.toString(1e-7)).isEqualTo("1e-7");
    assertThat(EcmaNumbers.toString(-1.25e-7)).isEqualTo("-1.25e-7");
  }

  @Test
  void writesShortestDigitsWhereJava17DoubleToStringDoesNot() {
    // JDK-4511638: Java 17 prints 2^-44 as 5.6843418860808015E-14, 1e23 as 9.999999999999999E22, 2e23 as
    // 1.9999999999999998E23 and Double.MIN_VALUE as 4.9E-324.
    assertThat(EcmaNumbers.toString(Math.scalb(1.0, -44))).isEqualTo("5.684341886080802e-14");
    assertThat(EcmaNumbers.toString(1e23)).isEqualTo("1e+23");
    assertThat(EcmaNumbers.toString(2e23)).isEqualTo("2e+23");
    assertThat(EcmaNumbers.toString(Double.MIN_VALUE)).isEqualTo("5e-324");
  }

  @Test
  void writesIntegersBelow2To53Exactly() {
    assertThat(EcmaNumbers.toString(0.0)).isEqualTo("0");
    assertThat(EcmaNumbers.toString(-0.0)).isEqualTo("0");
    assertThat(EcmaNumbers.toString(1.0)).isEqualTo("1");
    assertThat(EcmaNumbers.toString(-42.0)).isEqualTo("-42");
    assertThat(EcmaNumbers.toString(9007199254740991.0)).isEqualTo("9007199254740991");
    assertThat(EcmaNumbers.toString(1e15)).isEqualTo("1000000000000000");
  }

  @Test
  void matchesReferenceForEverySmallSubnormalAndEveryPowerOfTwo() {
    for (long bits = 1; bits <= 1000; bits++) {
      double v = Double.longBitsToDouble(bits);
      assertThat(EcmaNumbers.toString(v)).as("subnormal bits %d", bits).isEqualTo(ReferenceNumbers.toEcmaScript(v));
    }
    for (int e = 1; e < 2047; e++) {
      double v = Double.longBitsToDouble((long) e << 52);
      assertThat(EcmaNumbers.toString(v)).as("2^%d", e - 1075).isEqualTo(ReferenceNumbers.toEcmaScript(v));
      double above = Math.nextUp(v);
      if (!Double.isInfinite(above)) {
        assertThat(EcmaNumbers.toString(above)).isEqualTo(ReferenceNumbers.toEcmaScript(above));
      }
      double below = Math.nextDown(v);
      assertThat(EcmaNumbers.toString(below)).isEqualTo(ReferenceNumbers.toEcmaScript(below));
    }
  }

  @Test
  void matchesReferenceOnManySeededRandomBitPatterns() {
    Random random = new Random(8785);
    for (int i = 0; i < 5_000; i++) {
      double v = Double.longBitsToDouble(random.nextLong());
      if (Double.isNaN(v) || Double.isInfinite(v)) {
        continue;
      }
      assertThat(EcmaNumbers.toString(v)).as("bits %016x", Double.doubleToRawLongBits(v))
          .isEqualTo(ReferenceNumbers.toEcmaScript(v));
    }
  }

  @Property(tries = 3000)
  void randomDoublesAreShortestAndReadBackAsTheSameDouble(@ForAll("finiteDoubles") double v) {
    String written = EcmaNumbers.toString(v);

    assertThat(written).isEqualTo(ReferenceNumbers.toEcmaScript(v));
    assertThat(Double.parseDouble(written)).isEqualTo(v == 0 ? 0.0 : v);
  }

  @Property(tries = 2000)
  void decimalsWithFewDigitsKeepTheirDigits(@ForAll("shortDecimals") BigDecimal d) {
    double v = d.doubleValue();

    String written = EcmaNumbers.toString(v);

    assertThat(written).isEqualTo(ReferenceNumbers.format(d.stripTrailingZeros()));
  }

  @Provide
  Arbitrary<Double> finiteDoubles() {
    return Arbitraries.oneOf(
        Arbitraries.longs().map(Double::longBitsToDouble),
        Arbitraries.doubles(),
        Arbitraries.longs().between(0, (1L << 52) - 1).map(Double::longBitsToDouble),
        Arbitraries.integers().between(-1074, 1023).map(e -> Math.scalb(1.0, e)))
        .filter(v -> !Double.isNaN(v) && !Double.isInfinite(v));
  }

  @Provide
  Arbitrary<BigDecimal> shortDecimals() {
    return Arbitraries.longs().between(1, 999_999_999_999_999L)
        .flatMap(digits -> Arbitraries.integers().between(-300, 290)
            .map(exp -> new BigDecimal(java.math.BigInteger.valueOf(digits), -exp)
                .round(new MathContext(15, RoundingMode.HALF_EVEN))));
  }

  @Test
  void log10AndLog2ApproximationsAreExactOverTheRangeUsed() {
    for (int e = -1100; e <= 1100; e++) {
      assertThat(EcmaNumbers.flog10pow2(e)).as("floor(log10(2^%d))", e).isEqualTo(floorLog10OfPow2(e, false));
      assertThat(EcmaNumbers.flog10threeQuartersPow2(e)).as("floor(log10(3/4 2^%d))", e)
          .isEqualTo(floorLog10OfPow2(e, true));
    }
    for (int e = -400; e <= 400; e++) {
      assertThat(EcmaNumbers.flog2pow10(e)).as("floor(log2(10^%d))", e).isEqualTo(floorLog2OfPow10(e));
    }
  }

  private static int floorLog10OfPow2(int e, boolean threeQuarters) {
    BigDecimal v = e >= 0 ? new BigDecimal(java.math.BigInteger.TWO.pow(e))
        : BigDecimal.ONE.divide(new BigDecimal(java.math.BigInteger.TWO.pow(-e)));
    if (threeQuarters) {
      v = v.multiply(new BigDecimal("0.75"));
    }
    return v.precision() - v.scale() - 1;
  }

  private static int floorLog2OfPow10(int e) {
    if (e >= 0) {
      return java.math.BigInteger.TEN.pow(e).bitLength() - 1;
    }
    java.math.BigInteger d = java.math.BigInteger.TEN.pow(-e);
    return -d.bitLength();
  }
}
