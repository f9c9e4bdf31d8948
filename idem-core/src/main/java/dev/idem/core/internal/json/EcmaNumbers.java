package dev.idem.core.internal.json;

import java.math.BigInteger;

/**
 * Writes a double the way ECMAScript's {@code Number.prototype.toString} does, as RFC 8785 requires: the shortest
 * decimal that reads back as the same double (the closest one, ties to even, when several are that short), in plain
 * notation for 1e-7 &lt; |v| &lt; 1e21 and in exponent notation ({@code 1e+21}, {@code 1e-7}) outside that range;
 * {@code -0} is written as {@code 0}. Thread-safe (stateless).
 *
 * <p>Implementation note: Java 17's {@code Double.toString} is not always shortest (JDK-4511638, fixed in JDK 19),
 * so the digits come from Raffaello Giulietti's Schubfach algorithm ("The Schubfach way to render doubles", 2020),
 * the one JDK 19 adopted, with one change: ECMAScript lets the result shrink to a single digit (JDK 19's
 * {@code Double.toString} insists on two, for example {@code 4.9E-324} where ECMAScript says {@code 5e-324}), so the
 * "one digit fewer" step is tried whenever the candidate has two digits or more, and the JDK's widening of the
 * smallest subnormals is left out. The 126-bit powers of ten are computed exactly with {@link BigInteger} when the
 * class loads (617 entries, a few milliseconds). The tests compare the output against a slow, obviously correct
 * reference on random and boundary doubles.
 */
public final class EcmaNumbers {
  private static final int P = 53;
  private static final int Q_MIN = -1074;
  private static final long C_MIN = 1L << 52;
  private static final int BQ_MASK = 0x7ff;
  private static final long T_MASK = (1L << 52) - 1;
  private static final long MASK_63 = (1L << 63) - 1;
  private static final int K_MIN = -324;
  private static final int K_MAX = 292;

  /** For each k in [K_MIN, K_MAX]: g1 and g0 with g = g1 2^63 + g0 = floor(10^-k 2^(125 - floor(log2 10^-k))) + 1. */
  private static final long[] G = powersOfTen();

  static final long[] POW10 = new long[19];

  static {
    long p = 1;
    for (int i = 0; i < POW10.length; i++) {
      POW10[i] = p;
      p *= 10;
    }
  }

  private EcmaNumbers() {}

  /** The ECMAScript string of {@code v}. */
  public static String toString(double v) {
    ByteSink sink = new ByteSink(32);
    write(v, sink);
    return sink.toString();
  }

  /**
   * Appends the ECMAScript form of {@code v}.
   *
   * @throws IllegalArgumentException when {@code v} is NaN or infinite (JSON has no such numbers)
   */
  public static void write(double v, ByteSink out) {
    long bits = Double.doubleToRawLongBits(v);
    long t = bits & T_MASK;
    int bq = (int) (bits >>> (P - 1)) & BQ_MASK;
    if (bq == BQ_MASK) {
      throw new IllegalArgumentException("JSON has no representation for " + v + " (RFC 8785 forbids NaN and Infinity)");
    }
    boolean negative = bits < 0;
    if (bq != 0) {
      int mq = -Q_MIN + 1 - bq;
      long c = C_MIN | t;
      if (0 < mq & mq < P) {
        long f = c >> mq;
        if (f << mq == c) {
          emit(out, negative, f, 0);
          return;
        }
      }
      toDecimal(out, negative, -mq, c);
    } else if (t != 0) {
      toDecimal(out, negative, Q_MIN, t);
    } else {
      out.write('0');
    }
  }

  private static void toDecimal(ByteSink sink, boolean negative, int q, long c) {
    int out = (int) c & 0x1;
    long cb = c << 2;
    long cbr = cb + 2;
    long cbl;
    int k;
    if (c != C_MIN | q == Q_MIN) {
      cbl = cb - 2;
      k = flog10pow2(q);
    } else {
      cbl = cb - 1;
      k = flog10threeQuartersPow2(q);
    }
    int h = q + flog2pow10(-k) + 2;
    int index = (k - K_MIN) << 1;
    long g1 = G[index];
    long g0 = G[index + 1];

    long vb = rop(g1, g0, cb << h);
    long vbl = rop(g1, g0, cbl << h);
    long vbr = rop(g1, g0, cbr << h);

    long s = vb >> 2;
    if (s >= 10) {
      // sp10 = 10 floor(s / 10): is a decimal one digit shorter in the rounding interval?
      long sp10 = 10 * Math.multiplyHigh(s, 115_292_150_460_684_698L << 4);
      long tp10 = sp10 + 10;
      boolean upin = vbl + out <= sp10 << 2;
      boolean wpin = (tp10 << 2) + out <= vbr;
      if (upin != wpin) {
        emit(sink, negative, upin ? sp10 : tp10, k);
        return;
      }
    }
    long t = s + 1;
    boolean uin = vbl + out <= s << 2;
    boolean win = (t << 2) + out <= vbr;
    if (uin != win) {
      emit(sink, negative, uin ? s : t, k);
      return;
    }
    long cmp = vb - (s + t << 1);
    emit(sink, negative, cmp < 0 || cmp == 0 && (s & 0x1) == 0 ? s : t, k);
  }

  /** rop(cp g 2^-127) with g = g1 2^63 + g0: the product rounded to odd. */
  private static long rop(long g1, long g0, long cp) {
    long x1 = Math.multiplyHigh(g0, cp);
    long y0 = g1 * cp;
    long y1 = Math.multiplyHigh(g1, cp);
    long z = (y0 >>> 1) + x1;
    long vbp = y1 + (z >>> 63);
    return vbp | (z & MASK_63) + MASK_63 >>> 63;
  }

  /** floor(log10(2^e)) for |e| &lt;= 5456721. */
  static int flog10pow2(int e) {
    return (int) (e * 661_971_961_083L >> 41);
  }

  /** floor(log10(3/4 2^e)) for |e| &lt;= 5456721. */
  static int flog10threeQuartersPow2(int e) {
    return (int) (e * 661_971_961_083L + -274_743_187_321L >> 41);
  }

  /** floor(log2(10^e)) for |e| &lt;= 1838394. */
  static int flog2pow10(int e) {
    return (int) (e * 913_124_641_741L >> 38);
  }

  private static void emit(ByteSink out, boolean negative, long f, int e) {
    while (f % 10 == 0) {
      f /= 10;
      e++;
    }
    writeDecimal(out, negative, f, e + digitCount(f));
  }

  /**
   * Appends the ECMAScript form of the decimal {@code 0.d1d2...dk x 10^n}, where {@code digits} holds d1..dk with no
   * trailing zero (at most 18 digits). Zero is written as {@code 0} whatever the sign.
   */
  public static void writeDecimal(ByteSink out, boolean negative, long digits, int n) {
    if (digits == 0) {
      out.write('0');
      return;
    }
    int k = digitCount(digits);
    out.ensure(k + 32);
    byte[] b = out.array();
    int p = out.size();
    if (negative) {
      b[p++] = '-';
    }
    if (k <= n && n <= 21) {
      putDigits(b, p + k, digits, k);
      p += k;
      for (int i = k; i < n; i++) {
        b[p++] = '0';
      }
    } else if (0 < n && n <= 21) {
      int fraction = k - n;
      putDigits(b, p + n, digits / POW10[fraction], n);
      b[p + n] = '.';
      putDigits(b, p + k + 1, digits % POW10[fraction], fraction);
      p += k + 1;
    } else if (-6 < n && n <= 0) {
      b[p++] = '0';
      b[p++] = '.';
      for (int i = n; i < 0; i++) {
        b[p++] = '0';
      }
      putDigits(b, p + k, digits, k);
      p += k;
    } else {
      int e = n - 1;
      long scale = POW10[k - 1];
      b[p++] = (byte) ('0' + digits / scale);
      if (k > 1) {
        b[p++] = '.';
        putDigits(b, p + k - 1, digits % scale, k - 1);
        p += k - 1;
      }
      b[p++] = 'e';
      b[p++] = (byte) (e < 0 ? '-' : '+');
      int ae = Math.abs(e);
      int el = ae >= 100 ? 3 : ae >= 10 ? 2 : 1;
      putDigits(b, p + el, ae, el);
      p += el;
    }
    out.setSize(p);
  }

  private static void putDigits(byte[] b, int end, long v, int len) {
    if (v <= Integer.MAX_VALUE) {
      int iv = (int) v;
      for (int i = end - 1; i >= end - len; i--) {
        b[i] = (byte) ('0' + iv % 10);
        iv /= 10;
      }
      return;
    }
    for (int i = end - 1; i >= end - len; i--) {
      b[i] = (byte) ('0' + v % 10);
      v /= 10;
    }
  }

  static int digitCount(long v) {
    int len = 1;
    while (len < 19 && v >= POW10[len]) {
      len++;
    }
    return len;
  }

  private static long[] powersOfTen() {
    long[] table = new long[(K_MAX - K_MIN + 1) << 1];
    for (int k = K_MIN; k <= K_MAX; k++) {
      int e = -k;
      int r = flog2pow10(e);
      BigInteger beta;
      if (e >= 0) {
        BigInteger p = BigInteger.TEN.pow(e);
        int shift = 125 - r;
        beta = shift >= 0 ? p.shiftLeft(shift) : p.shiftRight(-shift);
      } else {
        beta = BigInteger.ONE.shiftLeft(125 - r).divide(BigInteger.TEN.pow(-e));
      }
      if (beta.bitLength() != 126) {
        throw new AssertionError("power of ten table: 10^" + e + " scaled to " + beta.bitLength() + " bits");
      }
      BigInteger g = beta.add(BigInteger.ONE);
      table[(k - K_MIN) << 1] = g.shiftRight(63).longValue();
      table[((k - K_MIN) << 1) + 1] = g.longValue() & MASK_63;
    }
    return table;
  }
}
