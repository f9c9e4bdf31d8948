package dev.idem.core.internal.json;

import dev.idem.core.fingerprint.MalformedJsonException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A validated JSON document as a flat index over its UTF-8 source: one token of four ints per value or member name,
 * in document order, so that the canonical writer can emit the document (or a projection of it) without building
 * strings, maps or boxed numbers. Object members are also kept sorted (RFC 8785 order, which is also how duplicates
 * are found), so sorting happens once, during the scan.
 *
 * <p>Token layout ({@code tokens[4t .. 4t+3]}): kind and flags; then
 * <ul>
 *   <li>object: member count, index of the token after the object, offset of its sorted name tokens in
 *       {@link #order};
 *   <li>array: element count, index of the token after the array;
 *   <li>string (value or member name): start and end byte offsets of the content, without the quotes, and, for
 *       plain ASCII (no escape), its first four bytes as a sort key;
 *   <li>number with at most 15 significant digits in the normal double range: the digits (two ints) and the
 *       decimal exponent {@code n} of {@code 0.digits x 10^n};
 *   <li>any other number: the double's bits (two ints).
 * </ul>
 * A member name token is followed directly by its value. Not thread-safe; reusable through {@link #parse}.
 */
public final class JsonTape {
  /** The nesting limit used unless a caller asks for another: 256 levels of objects and arrays. */
  public static final int DEFAULT_MAX_DEPTH = 256;

  static final int OBJECT = 1;
  static final int ARRAY = 2;
  static final int STRING = 3;
  static final int NUMBER = 4;
  static final int NUMBER_DOUBLE = 5;
  static final int TRUE = 6;
  static final int FALSE = 7;
  static final int NULL = 8;
  static final int KIND_MASK = 0xff;
  /** String flag: contains a backslash escape. */
  static final int ESCAPED = 1 << 8;
  /** String flag: contains bytes above 0x7F. */
  static final int NON_ASCII = 1 << 9;
  /** Number flag: the literal had a minus sign. */
  static final int NEGATIVE = 1 << 10;

  byte[] src = new byte[0];
  int[] tokens;
  int tokenCount;
  int[] order;
  int orderSize;
  /** Decoded member names, by token, filled lazily for names with escapes. */
  private String[] names;
  private boolean namesUsed;

  private final JsonScanner scanner = new JsonScanner(this);

  public JsonTape() {
    tokens = new int[256];
    order = new int[64];
  }

  /**
   * Parses and validates {@code utf8} (see {@link MalformedJsonException} for what is rejected), replacing whatever
   * this tape held. The array is referenced, not copied: do not change it while the tape is in use.
   *
   * @throws MalformedJsonException when the input is not valid I-JSON
   */
  public void parse(byte[] utf8, int maxDepth) {
    try {
      scanner.scan(utf8, maxDepth);
    } catch (JsonSyntaxError e) {
      throw e.toMalformed(utf8);
    }
  }

  /** Like {@link #parse} but reports invalid input by returning false, without building an exception. */
  public boolean tryParse(byte[] utf8, int maxDepth) {
    try {
      scanner.scan(utf8, maxDepth);
      return true;
    } catch (JsonSyntaxError e) {
      return false;
    }
  }

  void reset(byte[] source) {
    src = source;
    tokenCount = 0;
    orderSize = 0;
    if (namesUsed) {
      Arrays.fill(names, null);
      namesUsed = false;
    }
  }

  int add(int kindAndFlags, int a, int b, int c) {
    int base = tokenCount << 2;
    if (base + 4 > tokens.length) {
      tokens = Arrays.copyOf(tokens, tokens.length * 2);
    }
    int[] t = tokens;
    t[base] = kindAndFlags;
    t[base + 1] = a;
    t[base + 2] = b;
    t[base + 3] = c;
    return tokenCount++;
  }

  void set(int token, int a, int b, int c) {
    int base = token << 2;
    tokens[base + 1] = a;
    tokens[base + 2] = b;
    tokens[base + 3] = c;
  }

  /** Appends sorted name tokens and returns their offset in {@link #order}. */
  int addOrder(int[] from, int off, int len) {
    if (orderSize + len > order.length) {
      order = Arrays.copyOf(order, Math.max(order.length * 2, orderSize + len));
    }
    System.arraycopy(from, off, order, orderSize, len);
    int at = orderSize;
    orderSize += len;
    return at;
  }

  /** The root token. */
  public int root() {
    return 0;
  }

  int kind(int t) {
    return tokens[t << 2] & KIND_MASK;
  }

  int flags(int t) {
    return tokens[t << 2];
  }

  int a(int t) {
    return tokens[(t << 2) + 1];
  }

  int b(int t) {
    return tokens[(t << 2) + 2];
  }

  int c(int t) {
    return tokens[(t << 2) + 3];
  }

  /** The token after the value starting at {@code t} (skips a container's contents). */
  int next(int t) {
    int k = kind(t);
    return k == OBJECT || k == ARRAY ? b(t) : t + 1;
  }

  /** Whether the root is a JSON object. */
  public boolean rootIsObject() {
    return tokenCount > 0 && kind(0) == OBJECT;
  }

  long numberDigits(int t) {
    return ((long) a(t) << 32) | (b(t) & 0xFFFFFFFFL);
  }

  double numberValue(int t) {
    if (kind(t) == NUMBER_DOUBLE) {
      return Double.longBitsToDouble(numberDigits(t));
    }
    long digits = numberDigits(t);
    boolean negative = (flags(t) & NEGATIVE) != 0;
    if (digits == 0) {
      return negative ? -0.0 : 0.0;
    }
    int exponent = c(t) - EcmaNumbers.digitCount(digits);
    double v = DecimalParser.tryToDouble(digits, exponent, false);
    if (Double.isNaN(v)) {
      v = Double.parseDouble(digits + "E" + exponent);
    }
    return negative ? -v : v;
  }


  /** The decoded text of a string token (a value or a member name). */
  String string(int t) {
    int start = a(t);
    int end = b(t);
    int f = flags(t);
    if ((f & ESCAPED) == 0) {
      return new String(src, start, end - start, (f & NON_ASCII) == 0 ? StandardCharsets.ISO_8859_1 : StandardCharsets.UTF_8);
    }
    if (names == null || names.length < tokenCount) {
      names = names == null ? new String[Math.max(16, tokenCount)] : Arrays.copyOf(names, Math.max(names.length * 2, tokenCount));
    }
    String s = names[t];
    if (s == null) {
      s = unescape(start, end);
      names[t] = s;
      namesUsed = true;
    }
    return s;
  }

  /** The decoded name of the member whose name token is {@code t}. */
  public String memberName(int t) {
    return string(t);
  }

  private String unescape(int start, int end) {
    StringBuilder sb = new StringBuilder(end - start);
    int p = start;
    int run = start;
    while (p < end) {
      if (src[p] != '\\') {
        p++;
        continue;
      }
      if (run < p) {
        sb.append(new String(src, run, p - run, StandardCharsets.UTF_8));
      }
      byte e = src[p + 1];
      switch (e) {
        case 'b': sb.append('\b'); p += 2; break;
        case 'f': sb.append('\f'); p += 2; break;
        case 'n': sb.append('\n'); p += 2; break;
        case 'r': sb.append('\r'); p += 2; break;
        case 't': sb.append('\t'); p += 2; break;
        case 'u': sb.append((char) hex4(src, p + 2)); p += 6; break;
        default: sb.append((char) e); p += 2; break;
      }
      run = p;
    }
    if (run < end) {
      sb.append(new String(src, run, end - run, StandardCharsets.UTF_8));
    }
    return sb.toString();
  }

  /** The value of four hex digits at {@code p}, or -1 when they are not hex digits. */
  static int hex4(byte[] s, int p) {
    int v = 0;
    for (int i = p; i < p + 4; i++) {
      int d = HEX[s[i] & 0xff];
      if (d < 0) {
        return -1;
      }
      v = v << 4 | d;
    }
    return v;
  }

  private static final byte[] HEX = new byte[256];

  static {
    Arrays.fill(HEX, (byte) -1);
    for (int i = 0; i < 10; i++) {
      HEX['0' + i] = (byte) i;
    }
    for (int i = 0; i < 6; i++) {
      HEX['a' + i] = (byte) (10 + i);
      HEX['A' + i] = (byte) (10 + i);
    }
  }

  /**
   * Compares two member names by UTF-16 code units (RFC 8785 section 3.2.3). Names without escapes are compared on
   * their UTF-8 bytes, which agrees with UTF-16 order except between supplementary characters (lead byte F0-F4) and
   * U+E000..U+FFFF (lead byte EE or EF): UTF-16 puts the surrogate pairs first.
   */
  int compareNames(int x, int y) {
    int fx = flags(x);
    int fy = flags(y);
    if (((fx | fy) & (ESCAPED | NON_ASCII)) == 0) {
      int kx = c(x);
      int ky = c(y);
      if (kx != ky) {
        return kx < ky ? -1 : 1;
      }
    } else if (((fx | fy) & ESCAPED) != 0) {
      return string(x).compareTo(string(y));
    }
    byte[] s = src;
    int xs = a(x);
    int ys = a(y);
    int xl = b(x) - xs;
    int yl = b(y) - ys;
    int n = Math.min(xl, yl);
    for (int i = 0; i < n; i++) {
      int cx = s[xs + i] & 0xff;
      int cy = s[ys + i] & 0xff;
      if (cx != cy) {
        if (cx >= 0xEE && cy >= 0xEE) {
          boolean sx = cx >= 0xF0;
          boolean sy = cy >= 0xF0;
          if (sx != sy) {
            return sx ? -1 : 1;
          }
        }
        return cx - cy;
      }
    }
    return xl - yl;
  }

  /** Whether the name token {@code t} equals the name whose UTF-8 bytes are {@code utf8} (or, decoded, {@code name}). */
  boolean nameEquals(int t, byte[] utf8, String name) {
    if ((flags(t) & ESCAPED) != 0) {
      return string(t).equals(name);
    }
    int start = a(t);
    int len = b(t) - start;
    return len == utf8.length && Arrays.equals(src, start, start + len, utf8, 0, len);
  }

  /** Bytes the tape's arrays hold, so a cache can decide whether to keep it. */
  public long footprint() {
    return 4L * tokens.length + 4L * order.length + (names == null ? 0 : 8L * names.length) + scanner.footprint();
  }

  MalformedJsonException malformed(int offset, String reason) {
    return JsonSyntaxError.malformed(src, offset, reason);
  }
}
