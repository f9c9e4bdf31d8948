package dev.idem.core.internal.json;

import java.math.BigInteger;

/**
 * Converts a decimal {@code digits x 10^exponent} to the nearest double without building a string: Clinger's exact
 * fast path when both parts are exact doubles, else the Eisel-Lemire algorithm (Daniel Lemire, "Number Parsing at a Gigabyte per Second", 2021; as in Go's
 * {@code strconv}), which is exact or reports that it cannot decide; then {@link Double#parseDouble} decides. It
 * cannot decide for subnormal results, values beyond the double range, and rare halfway cases. Thread-safe
 * (stateless).
 *
 * <p>Implementation note: the 128-bit truncated powers of ten are computed with {@link BigInteger} when the class
 * loads. The tests compare against {@link Double#parseDouble} on random and boundary inputs.
 */
final class DecimalParser {
  private static final int MIN_EXPONENT = -348;
  private static final int MAX_EXPONENT = 347;
  /** For each exponent e: the high and low 64 bits of floor(10^e) normalised to 128 bits (top bit set). */
  private static final long[] POWERS = powers();
  private static final double[] EXACT_POWERS_OF_TEN = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
    1e20, 1e21, 1e22
  };

  private DecimalParser() {}

  /**
   * The double nearest to {@code digits x 10^exponent}, where {@code digits} is read as an unsigned 64-bit integer,
   * or NaN when the fast algorithm cannot decide (the caller then parses the text).
   */
  static double tryToDouble(long digits, long exponent, boolean negative) {
    if (digits == 0) {
      return negative ? -0.0 : 0.0;
    }
    if (digits > 0 && digits < 1L << 53 && exponent >= -22 && exponent <= 22) {
      // Clinger's fast path: both operands are exact doubles, so one correctly rounded operation is exact.
      double v = exponent >= 0 ? digits * EXACT_POWERS_OF_TEN[(int) exponent] : digits / EXACT_POWERS_OF_TEN[(int) -exponent];
      return negative ? -v : v;
    }
    if (exponent < MIN_EXPONENT || exponent > MAX_EXPONENT) {
      return Double.NaN;
    }
    int e = (int) exponent;
    int clz = Long.numberOfLeadingZeros(digits);
    long man = digits << clz;
    long retExp2 = ((217706L * e) >> 16) + 64 + 1023 - clz;
    int index = (e - MIN_EXPONENT) << 1;
    long powHi = POWERS[index];
    long powLo = POWERS[index + 1];

    long xHi = unsignedMultiplyHigh(man, powHi);
    long xLo = man * powHi;
    if ((xHi & 0x1FF) == 0x1FF && Long.compareUnsigned(xLo + man, man) < 0) {
      long yHi = unsignedMultiplyHigh(man, powLo);
      long yLo = man * powLo;
      long mergedHi = xHi;
      long mergedLo = xLo + yHi;
      if (Long.compareUnsigned(mergedLo, xLo) < 0) {
        mergedHi++;
      }
      if ((mergedHi & 0x1FF) == 0x1FF && mergedLo + 1 == 0 && Long.compareUnsigned(yLo + man, man) < 0) {
        return Double.NaN;
      }
      xHi = mergedHi;
      xLo = mergedLo;
    }
    long msb = xHi >>> 63;
    long mantissa = xHi >>> (msb + 9);
    retExp2 -= 1 ^ msb;
    if (xLo == 0 && (xHi & 0x1FF) == 0 && (mantissa & 3) == 1) {
      return Double.NaN;
    }
    mantissa += mantissa & 1;
    mantissa >>>= 1;
    if (mantissa >>> 53 > 0) {
      mantissa >>>= 1;
      retExp2++;
    }
    if (retExp2 <= 0 || retExp2 >= 0x7FF) {
      return Double.NaN;
    }
    long bits = retExp2 << 52 | mantissa & 0x000F_FFFF_FFFF_FFFFL;
    if (negative) {
      bits |= Long.MIN_VALUE;
    }
    return Double.longBitsToDouble(bits);
  }

  private static long unsignedMultiplyHigh(long x, long y) {
    return Math.multiplyHigh(x, y) + ((x >> 63) & y) + ((y >> 63) & x);
  }

  private static long[] powers() {
    long[] table = new long[(MAX_EXPONENT - MIN_EXPONENT + 1) << 1];
    BigInteger mask = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
    for (int e = MIN_EXPONENT; e <= MAX_EXPONENT; e++) {
      BigInteger t;
      if (e >= 0) {
        BigInteger v = BigInteger.TEN.pow(e);
        int bits = v.bitLength();
        t = bits <= 128 ? v.shiftLeft(128 - bits) : v.shiftRight(bits - 128);
      } else {
        BigInteger d = BigInteger.TEN.pow(-e);
        t = BigInteger.ONE.shiftLeft(127 + d.bitLength()).divide(d);
      }
      if (t.bitLength() != 128) {
        throw new AssertionError("power of ten table: 10^" + e + " normalised to " + t.bitLength() + " bits");
      }
      table[(e - MIN_EXPONENT) << 1] = t.shiftRight(64).longValue();
      table[((e - MIN_EXPONENT) << 1) + 1] = t.and(mask).longValue();
    }
    return table;
  }
}
