package dev.idem.core.internal.json;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * A slow, obviously correct reference for ECMAScript number formatting, for tests only: for each precision from 1 to
 * 17 it rounds the exact binary value down and up with {@link BigDecimal}, keeps the candidates that {@link
 * Double#parseDouble} reads back as the same double, and at the first precision that has one picks the closest
 * (ties to an even last digit). Then it formats the decimal as ECMAScript's Number::toString does.
 */
public final class ReferenceNumbers {
  private ReferenceNumbers() {}

  /** The shortest decimal that reads back as {@code v}, without trailing zeros; zero for both zeros. */
  public static BigDecimal shortest(double v) {
    if (v == 0) {
      return BigDecimal.ZERO;
    }
    BigDecimal exact = new BigDecimal(v);
    for (int p = 1; p <= 17; p++) {
      BigDecimal down = exact.round(new MathContext(p, RoundingMode.DOWN));
      BigDecimal up = exact.round(new MathContext(p, RoundingMode.UP));
      boolean downOk = Double.parseDouble(down.toString()) == v;
      boolean upOk = Double.parseDouble(up.toString()) == v;
      BigDecimal pick = null;
      if (downOk && upOk) {
        int cmp = exact.subtract(down).abs().compareTo(up.subtract(exact).abs());
        pick = cmp < 0 ? down : cmp > 0 ? up : down.unscaledValue().testBit(0) ? up : down;
      } else if (downOk) {
        pick = down;
      } else if (upOk) {
        pick = up;
      }
      if (pick != null) {
        return pick.stripTrailingZeros();
      }
    }
    throw new AssertionError("no decimal of 17 digits or fewer reads back as " + v);
  }

  /** ECMAScript's {@code String(v)}. */
  public static String toEcmaScript(double v) {
    return format(shortest(v));
  }

  /** ECMAScript's Number::toString layout of a decimal without trailing zeros. */
  public static String format(BigDecimal d) {
    if (d.signum() == 0) {
      return "0";
    }
    String sign = d.signum() < 0 ? "-" : "";
    d = d.abs().stripTrailingZeros();
    String digits = d.unscaledValue().toString();
    int k = digits.length();
    int n = k - d.scale();
    if (k <= n && n <= 21) {
      return sign + digits + "0".repeat(n - k);
    }
    if (0 < n && n <= 21) {
      return sign + digits.substring(0, n) + "." + digits.substring(n);
    }
    if (-6 < n && n <= 0) {
      return sign + "0." + "0".repeat(-n) + digits;
    }
    int e = n - 1;
    return sign + digits.charAt(0) + (k > 1 ? "." + digits.substring(1) : "") + "e" + (e < 0 ? "-" : "+") + Math.abs(e);
  }
}
