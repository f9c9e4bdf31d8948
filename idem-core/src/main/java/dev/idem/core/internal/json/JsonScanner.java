package dev.idem.core.internal.json;

import static dev.idem.core.internal.json.JsonTape.ARRAY;
import static dev.idem.core.internal.json.JsonTape.ESCAPED;
import static dev.idem.core.internal.json.JsonTape.FALSE;
import static dev.idem.core.internal.json.JsonTape.NEGATIVE;
import static dev.idem.core.internal.json.JsonTape.NON_ASCII;
import static dev.idem.core.internal.json.JsonTape.NULL;
import static dev.idem.core.internal.json.JsonTape.NUMBER;
import static dev.idem.core.internal.json.JsonTape.NUMBER_DOUBLE;
import static dev.idem.core.internal.json.JsonTape.OBJECT;
import static dev.idem.core.internal.json.JsonTape.STRING;
import static dev.idem.core.internal.json.JsonTape.TRUE;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Recursive-descent scanner that validates UTF-8 JSON against RFC 8259 and the I-JSON rules of RFC 7493 and fills a
 * {@link JsonTape}. Rejects: syntax errors, trailing text, duplicate member names, lone surrogates (escaped, or
 * encoded as bytes ED A0..BF), invalid UTF-8, numbers that overflow a double, and nesting deeper than the limit.
 * Numbers that underflow are accepted (they read as zero, or as a subnormal). Not thread-safe.
 */
final class JsonScanner {
  private static final int INSERTION_SORT_MAX = 12;

  private final JsonTape tape;
  private byte[] src;
  private int end;
  private int pos;
  private int maxDepth;
  private int[] nameStack = new int[64];
  private int nameTop;
  private int[] sortBuffer = new int[64];

  JsonScanner(JsonTape tape) {
    this.tape = tape;
  }

  long footprint() {
    return 4L * nameStack.length + 4L * sortBuffer.length;
  }

  void scan(byte[] source, int depthLimit) {
    if (depthLimit < 1) {
      throw new IllegalArgumentException("maxDepth must be at least 1, got " + depthLimit);
    }
    tape.reset(source);
    src = source;
    end = source.length;
    pos = 0;
    nameTop = 0;
    maxDepth = depthLimit;
    skipWhitespace();
    if (pos == end) {
      throw new JsonSyntaxError(pos, "empty document: expected a JSON value");
    }
    value(0);
    skipWhitespace();
    if (pos != end) {
      throw new JsonSyntaxError(pos, "unexpected " + JsonSyntaxError.describe(src, pos) + " after the JSON value");
    }
  }

  private void skipWhitespace() {
    byte[] s = src;
    int p = pos;
    while (p < end) {
      byte c = s[p];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
        break;
      }
      p++;
    }
    pos = p;
  }

  private void value(int depth) {
    if (pos >= end) {
      throw new JsonSyntaxError(pos, "unexpected end of input: expected a JSON value");
    }
    switch (src[pos]) {
      case '{':
        object(depth + 1);
        break;
      case '[':
        array(depth + 1);
        break;
      case '"':
        string();
        break;
      case 't':
        literal("true", TRUE);
        break;
      case 'f':
        literal("false", FALSE);
        break;
      case 'n':
        literal("null", NULL);
        break;
      case '-': case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
        number();
        break;
      default:
        throw new JsonSyntaxError(pos, "unexpected " + JsonSyntaxError.describe(src, pos) + ": expected a JSON value");
    }
  }

  private void literal(String word, int kind) {
    int len = word.length();
    for (int i = 0; i < len; i++) {
      if (pos + i >= end || src[pos + i] != word.charAt(i)) {
        throw new JsonSyntaxError(pos, "invalid literal: expected '" + word + "'");
      }
    }
    pos += len;
    tape.add(kind, 0, 0, 0);
  }

  private void checkDepth(int depth) {
    if (depth > maxDepth) {
      throw new JsonSyntaxError(pos, "nesting deeper than " + maxDepth + " levels of objects and arrays");
    }
  }

  private void object(int depth) {
    checkDepth(depth);
    int token = tape.add(OBJECT, 0, 0, 0);
    pos++;
    int base = nameTop;
    int count = 0;
    skipWhitespace();
    if (pos < end && src[pos] == '}') {
      pos++;
    } else {
      while (true) {
        if (pos >= end || src[pos] != '"') {
          throw new JsonSyntaxError(pos, "unexpected " + JsonSyntaxError.describe(src, pos)
              + (count == 0 ? ": expected a member name (a string) or '}'" : ": expected a member name (a string) after ','"));
        }
        int name = string();
        push(name);
        skipWhitespace();
        if (pos >= end || src[pos] != ':') {
          throw new JsonSyntaxError(pos, "unexpected " + JsonSyntaxError.describe(src, pos) + ": expected ':' after member name");
        }
        pos++;
        skipWhitespace();
        value(depth);
        count++;
        skipWhitespace();
        if (pos < end && src[pos] == ',') {
          pos++;
          skipWhitespace();
        } else if (pos < end && src[pos] == '}') {
          pos++;
          break;
        } else {
          throw new JsonSyntaxError(pos, "unexpected " + JsonSyntaxError.describe(src, pos) + ": expected ',' or '}' after an object member");
        }
      }
    }
    int orderOffset = sortMembers(base, count);
    nameTop = base;
    tape.set(token, count, tape.tokenCount, orderOffset);
  }

  private void array(int depth) {
    checkDepth(depth);
    int token = tape.add(ARRAY, 0, 0, 0);
    pos++;
    int count = 0;
    skipWhitespace();
    if (pos < end && src[pos] == ']') {
      pos++;
    } else {
      while (true) {
        value(depth);
        count++;
        skipWhitespace();
        if (pos < end && src[pos] == ',') {
          pos++;
          skipWhitespace();
        } else if (pos < end && src[pos] == ']') {
          pos++;
          break;
        } else {
          throw new JsonSyntaxError(pos, "unexpected " + JsonSyntaxError.describe(src, pos) + ": expected ',' or ']' after an array element");
        }
      }
    }
    tape.set(token, count, tape.tokenCount, 0);
  }

  private void push(int nameToken) {
    if (nameTop == nameStack.length) {
      nameStack = Arrays.copyOf(nameStack, nameStack.length * 2);
    }
    nameStack[nameTop++] = nameToken;
  }

  /** Sorts the names of one object into RFC 8785 order, rejects duplicates, and stores the order in the tape. */
  private int sortMembers(int base, int count) {
    int[] names = nameStack;
    if (count <= INSERTION_SORT_MAX) {
      for (int i = base + 1; i < base + count; i++) {
        int x = names[i];
        int j = i - 1;
        while (j >= base) {
          int cmp = tape.compareNames(names[j], x);
          if (cmp == 0) {
            throw duplicate(names[j], x);
          }
          if (cmp < 0) {
            break;
          }
          names[j + 1] = names[j];
          j--;
        }
        names[j + 1] = x;
      }
    } else {
      if (sortBuffer.length < count) {
        sortBuffer = new int[Math.max(count, sortBuffer.length * 2)];
      }
      mergeSort(names, base, base + count, sortBuffer);
      for (int i = base + 1; i < base + count; i++) {
        if (tape.compareNames(names[i - 1], names[i]) == 0) {
          throw duplicate(names[i - 1], names[i]);
        }
      }
    }
    return tape.addOrder(names, base, count);
  }

  private void mergeSort(int[] a, int from, int to, int[] tmp) {
    int n = to - from;
    if (n <= INSERTION_SORT_MAX) {
      for (int i = from + 1; i < to; i++) {
        int x = a[i];
        int j = i - 1;
        while (j >= from && tape.compareNames(a[j], x) > 0) {
          a[j + 1] = a[j];
          j--;
        }
        a[j + 1] = x;
      }
      return;
    }
    int mid = from + n / 2;
    mergeSort(a, from, mid, tmp);
    mergeSort(a, mid, to, tmp);
    if (tape.compareNames(a[mid - 1], a[mid]) <= 0) {
      return;
    }
    System.arraycopy(a, from, tmp, 0, n);
    int i = 0;
    int j = mid - from;
    int k = from;
    while (i < mid - from && j < n) {
      a[k++] = tape.compareNames(tmp[i], tmp[j]) <= 0 ? tmp[i++] : tmp[j++];
    }
    while (i < mid - from) {
      a[k++] = tmp[i++];
    }
    while (j < n) {
      a[k++] = tmp[j++];
    }
  }

  private JsonSyntaxError duplicate(int x, int y) {
    int first = Math.min(tape.a(x), tape.a(y));
    int second = Math.max(tape.a(x), tape.a(y));
    var at = JsonSyntaxError.malformed(src, first - 1, "");
    return new JsonSyntaxError(second - 1, "duplicate member name \"" + printable(tape.string(x)) + "\" (first at line "
        + at.line() + ", column " + at.column() + "); I-JSON requires unique names");
  }

  private static String printable(String name) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < name.length() && sb.length() < 80; i++) {
      char c = name.charAt(i);
      if (c < 0x20 || c == '"' || c == '\\') {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.length() < name.length() ? sb.append("...").toString() : sb.toString();
  }

  /** Scans the string at {@code pos} (the opening quote) and returns its token. */
  private int string() {
    byte[] s = src;
    int open = pos;
    int p = pos + 1;
    int start = p;
    int flags = 0;
    while (true) {
      // Eight bytes at a time while none of them is a quote, a backslash, a control character or non-ASCII.
      while (p + 8 <= end && plainAscii((long) LONGS.get(s, p))) {
        p += 8;
      }
      int c = 0;
      while (p < end && (c = s[p]) >= 0x20 && c != '"' && c != '\\') {
        p++;
      }
      if (p >= end) {
        throw new JsonSyntaxError(end, "unterminated string (opened at byte offset " + open + ")");
      }
      if (c == '"') {
        break;
      }
      if (c == '\\') {
        flags |= ESCAPED;
        p = escape(p);
      } else if (c < 0) {
        flags |= NON_ASCII;
        p = utf8(p);
      } else {
        throw new JsonSyntaxError(p, String.format("control character U+%04X in a string must be escaped", c));
      }
    }
    pos = p + 1;
    return tape.add(STRING | flags, start, p, flags == 0 ? prefix(s, start, p) : 0);
  }

  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long ONES = 0x0101_0101_0101_0101L;
  private static final long HIGHS = 0x8080_8080_8080_8080L;

  /**
   * Whether none of the eight bytes in {@code x} is {@code "}, {@code \}, below 0x20 or above 0x7F (SWAR: a byte
   * {@code b} below {@code n}, for {@code b < 0x80}, makes {@code (b - n) & ~b} set its high bit).
   */
  private static boolean plainAscii(long x) {
    long quote = x ^ (ONES * '"');
    long backslash = x ^ (ONES * '\\');
    long found = x
        | (x - ONES * 0x20) & ~x
        | (quote - ONES) & ~quote
        | (backslash - ONES) & ~backslash;
    return (found & HIGHS) == 0;
  }

  /** The first four bytes of a plain ASCII string, big-endian, zero-padded: orders like the strings themselves. */
  private static int prefix(byte[] s, int start, int end) {
    int key = 0;
    for (int i = start; i < start + 4; i++) {
      key = key << 8 | (i < end ? s[i] : 0);
    }
    return key;
  }

  private int escape(int p) {
    byte[] s = src;
    if (p + 1 >= end) {
      throw new JsonSyntaxError(p, "unterminated escape sequence");
    }
    switch (s[p + 1]) {
      case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
        return p + 2;
      case 'u':
        int unit = unicodeEscape(p);
        if (unit >= 0xD800 && unit <= 0xDBFF) {
          if (p + 12 <= end && s[p + 6] == '\\' && s[p + 7] == 'u') {
            int low = unicodeEscape(p + 6);
            if (low >= 0xDC00 && low <= 0xDFFF) {
              return p + 12;
            }
          }
          throw new JsonSyntaxError(p, String.format(
              "lone surrogate \\u%04x: a high surrogate must be followed by an escaped low surrogate (I-JSON)", unit));
        }
        if (unit >= 0xDC00 && unit <= 0xDFFF) {
          throw new JsonSyntaxError(p, String.format(
              "lone surrogate \\u%04x: a low surrogate must follow an escaped high surrogate (I-JSON)", unit));
        }
        return p + 6;
      default:
        throw new JsonSyntaxError(p, "invalid escape sequence '\\" + JsonSyntaxError.describe(src, p + 1)
            .replace("character '", "").replace("'", "") + "'");
    }
  }

  private int unicodeEscape(int p) {
    if (p + 6 > end) {
      throw new JsonSyntaxError(p, "invalid \\u escape: expected four hex digits");
    }
    int v = JsonTape.hex4(src, p + 2);
    if (v < 0) {
      throw new JsonSyntaxError(p, "invalid \\u escape: expected four hex digits");
    }
    return v;
  }

  /** Validates one UTF-8 sequence of two or more bytes at {@code p} and returns the offset after it. */
  private int utf8(int p) {
    byte[] s = src;
    int b0 = s[p] & 0xff;
    if (b0 < 0xC2 || b0 > 0xF4) {
      throw new JsonSyntaxError(p, String.format("invalid UTF-8: byte 0x%02X cannot start a character", b0));
    }
    int len = b0 < 0xE0 ? 2 : b0 < 0xF0 ? 3 : 4;
    if (p + len > end) {
      throw new JsonSyntaxError(p, "invalid UTF-8: truncated sequence");
    }
    for (int i = 1; i < len; i++) {
      if ((s[p + i] & 0xC0) != 0x80) {
        throw new JsonSyntaxError(p, String.format("invalid UTF-8: byte 0x%02X after lead byte 0x%02X", s[p + i] & 0xff, b0));
      }
    }
    int b1 = s[p + 1] & 0xff;
    if (b0 == 0xE0 && b1 < 0xA0 || b0 == 0xF0 && b1 < 0x90) {
      throw new JsonSyntaxError(p, "invalid UTF-8: overlong encoding");
    }
    if (b0 == 0xED && b1 >= 0xA0) {
      int unit = 0xD000 | (b1 & 0x3F) << 6 | (s[p + 2] & 0x3F);
      throw new JsonSyntaxError(p, String.format("lone surrogate U+%04X encoded in UTF-8 (invalid UTF-8, not allowed by I-JSON)", unit));
    }
    if (b0 == 0xF4 && b1 >= 0x90) {
      throw new JsonSyntaxError(p, "invalid UTF-8: code point above U+10FFFF");
    }
    return p + len;
  }

  private void number() {
    byte[] s = src;
    int start = pos;
    int p = pos;
    boolean negative = false;
    if (s[p] == '-') {
      negative = true;
      p++;
    }
    long digits = 0;
    int significant = 0;
    int pendingZeros = 0;
    boolean nonZero = false;
    long integerDigits = 0;
    long leadingFractionZeros = 0;

    if (p >= end || s[p] < '0' || s[p] > '9') {
      throw new JsonSyntaxError(p, "unexpected " + JsonSyntaxError.describe(src, p) + ": expected a digit");
    }
    if (s[p] == '0') {
      p++;
      if (p < end && s[p] >= '0' && s[p] <= '9') {
        throw new JsonSyntaxError(p - 1, "leading zeros are not allowed in numbers");
      }
    } else {
      int c;
      while (p < end && (c = s[p] - '0') >= 0 && c <= 9) {
        integerDigits++;
        if (c == 0) {
          pendingZeros++;
        } else {
          if (significant + pendingZeros < 18) {
            digits = digits * EcmaNumbers.POW10[pendingZeros + 1] + c;
          }
          significant += pendingZeros + 1;
          pendingZeros = 0;
          nonZero = true;
        }
        p++;
      }
    }
    if (p < end && s[p] == '.') {
      p++;
      if (p >= end || s[p] < '0' || s[p] > '9') {
        throw new JsonSyntaxError(p, "unexpected " + JsonSyntaxError.describe(src, p) + ": expected a digit after '.'");
      }
      int c;
      while (p < end && (c = s[p] - '0') >= 0 && c <= 9) {
        if (c == 0) {
          if (nonZero) {
            pendingZeros++;
          } else {
            leadingFractionZeros++;
          }
        } else {
          if (significant + pendingZeros < 18) {
            digits = digits * EcmaNumbers.POW10[pendingZeros + 1] + c;
          }
          significant += pendingZeros + 1;
          pendingZeros = 0;
          nonZero = true;
        }
        p++;
      }
    }
    long exponent = 0;
    if (p < end && (s[p] == 'e' || s[p] == 'E')) {
      p++;
      boolean negativeExponent = false;
      if (p < end && (s[p] == '+' || s[p] == '-')) {
        negativeExponent = s[p] == '-';
        p++;
      }
      if (p >= end || s[p] < '0' || s[p] > '9') {
        throw new JsonSyntaxError(p, "unexpected " + JsonSyntaxError.describe(src, p) + ": expected a digit in the exponent");
      }
      int c;
      while (p < end && (c = s[p] - '0') >= 0 && c <= 9) {
        if (exponent < 1_000_000_000L) {
          exponent = exponent * 10 + c;
        }
        p++;
      }
      if (negativeExponent) {
        exponent = -exponent;
      }
    }
    pos = p;
    int sign = negative ? NEGATIVE : 0;
    if (!nonZero) {
      tape.add(NUMBER | sign, 0, 0, 0);
      return;
    }
    long n = (integerDigits > 0 ? integerDigits : -leadingFractionZeros) + exponent;
    if (significant <= 15 && n >= -306 && n <= 308) {
      // At most 15 significant digits in the normal range: the literal's digits are the shortest decimal of the
      // double they round to (two such decimals are further apart than the double spacing), so no conversion.
      tape.add(NUMBER | sign, (int) (digits >>> 32), (int) digits, (int) n);
      return;
    }
    double v = significant <= 18 ? DecimalParser.tryToDouble(digits, n - significant, negative) : Double.NaN;
    if (Double.isNaN(v)) {
      v = Double.parseDouble(new String(s, start, p - start, StandardCharsets.ISO_8859_1));
    }
    if (Double.isInfinite(v)) {
      String literal = p - start > 40 ? new String(s, start, 37, StandardCharsets.ISO_8859_1) + "..." : new String(s, start, p - start, StandardCharsets.ISO_8859_1);
      throw new JsonSyntaxError(start, "number " + literal + " is outside the range of an IEEE 754 double (I-JSON)");
    }
    long bits = Double.doubleToRawLongBits(v);
    tape.add(NUMBER_DOUBLE | sign, (int) (bits >>> 32), (int) bits, 0);
  }
}
