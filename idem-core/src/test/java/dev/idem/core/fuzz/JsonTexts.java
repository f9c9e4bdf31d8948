package dev.idem.core.fuzz;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;

/**
 * Hostile JSON text, chosen with a {@link Random} so that jqwik can reproduce it from its seed: documents from the
 * grammar with deliberate faults mixed in (duplicate members spelled two ways, lone surrogates, raw control
 * characters, misspelled literals, numbers of every shape valid and not, nesting around the 256-level limit), the
 * same documents with a few bytes mutated, and raw bytes.
 */
final class JsonTexts {
  private static final String[] NAMES = {"a", "b", "A", "aa", "", "é", "\u00e9", "😀", "\ufb33", "\u007f", "id", "~"};
  private static final String[] BAD_WHITESPACE = {"\f", "\u000b", "\u00a0", "\u2028", "\ufeff", "\u0000"};
  private static final byte[] INTERESTING_BYTES = {
    '{', '}', '[', ']', '"', '\\', ':', ',', '0', '1', '9', '-', '+', '.', 'e', 'E', 'u', 't', 'n', ' ', '\n', 0, 0x1f,
    0x7f, (byte) 0x80, (byte) 0xbf, (byte) 0xc0, (byte) 0xc1, (byte) 0xc2, (byte) 0xe0, (byte) 0xed, (byte) 0xef,
    (byte) 0xf0, (byte) 0xf4, (byte) 0xf5, (byte) 0xff,
  };

  private final Random random;
  /** How likely each choice is to be a fault; 0 writes valid JSON. */
  private final double faults;

  private JsonTexts(Random random, double faults) {
    this.random = random;
    this.faults = faults;
  }

  /** A document from the grammar; about a third are valid. */
  static byte[] document(Random random) {
    JsonTexts t = new JsonTexts(random, random.nextInt(3) == 0 ? 0 : 0.02);
    StringBuilder sb = new StringBuilder();
    t.whitespace(sb);
    if (random.nextInt(25) == 0) {
      t.deep(sb);
    } else {
      t.value(sb, random.nextInt(5));
    }
    t.whitespace(sb);
    return sb.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** A document with one to four byte-level mutations. */
  static byte[] mutated(Random random) {
    byte[] b = document(random);
    for (int n = 1 + random.nextInt(4); n > 0; n--) {
      int at = b.length == 0 ? 0 : random.nextInt(b.length);
      byte x = random.nextBoolean() ? INTERESTING_BYTES[random.nextInt(INTERESTING_BYTES.length)]
          : (byte) random.nextInt(256);
      switch (random.nextInt(5)) {
        case 0:
          if (b.length > 0) {
            b[at] = x;
          }
          break;
        case 1:
          b = insert(b, at, new byte[] {x});
          break;
        case 2:
          if (b.length > 0) {
            b = concat(Arrays.copyOf(b, at), Arrays.copyOfRange(b, at + 1, b.length));
          }
          break;
        case 3:
          b = Arrays.copyOf(b, at);
          break;
        default:
          int end = at + random.nextInt(Math.max(1, b.length - at));
          b = insert(b, at, Arrays.copyOfRange(b, at, end));
      }
    }
    return b;
  }

  /** Random bytes, mostly from the JSON alphabet and UTF-8 lead and continuation bytes. */
  static byte[] bytes(Random random) {
    byte[] b = new byte[random.nextInt(48)];
    for (int i = 0; i < b.length; i++) {
      b[i] = random.nextInt(4) == 0 ? (byte) random.nextInt(256)
          : INTERESTING_BYTES[random.nextInt(INTERESTING_BYTES.length)];
    }
    return b;
  }

  /** A single number in an array: every shape, valid and not, including decimals halfway between two doubles. */
  static byte[] number(Random random) {
    JsonTexts t = new JsonTexts(random, 0.1);
    return ("[" + t.number() + "]").getBytes(StandardCharsets.UTF_8);
  }

  private boolean fault() {
    return random.nextDouble() < faults;
  }

  private void value(StringBuilder sb, int depth) {
    int kind = random.nextInt(depth > 0 ? 8 : 5);
    switch (kind) {
      case 0:
        string(sb);
        break;
      case 1:
      case 2:
        sb.append(number());
        break;
      case 3:
        sb.append(new String[] {"true", "false", "null"}[random.nextInt(3)]);
        if (fault()) {
          sb.setLength(sb.length() - 1 - random.nextInt(2));
        }
        break;
      case 4:
        sb.append(fault() ? new String[] {"True", "nul", "NaN", "Infinity", "-Infinity", "undefined"}[random.nextInt(6)]
            : "null");
        break;
      case 5:
        array(sb, depth - 1);
        break;
      default:
        object(sb, depth - 1);
    }
  }

  private void array(StringBuilder sb, int depth) {
    sb.append('[');
    int n = random.nextInt(5);
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        sb.append(fault() ? "" : ",");
      }
      whitespace(sb);
      value(sb, depth);
      whitespace(sb);
    }
    if (n > 0 && fault()) {
      sb.append(',');
    }
    sb.append(fault() ? "" : "]");
  }

  private void object(StringBuilder sb, int depth) {
    sb.append('{');
    int n = random.nextInt(5);
    String previous = null;
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        sb.append(fault() ? ";" : ",");
      }
      whitespace(sb);
      String name = previous != null && fault() ? previous : NAMES[random.nextInt(NAMES.length)] + i;
      previous = name;
      spell(name, sb);
      whitespace(sb);
      sb.append(fault() ? "=" : ":");
      whitespace(sb);
      value(sb, depth);
      whitespace(sb);
    }
    sb.append(fault() ? "" : "}");
  }

  /** Nesting right around the limit. */
  private void deep(StringBuilder sb) {
    int depth = 250 + random.nextInt(12);
    boolean objects = random.nextBoolean();
    for (int i = 0; i < depth; i++) {
      sb.append(objects ? "{\"k\":" : "[");
    }
    sb.append(random.nextInt(10));
    for (int i = 0; i < depth; i++) {
      sb.append(objects ? "}" : "]");
    }
  }

  private void string(StringBuilder sb) {
    StringBuilder s = new StringBuilder();
    int n = random.nextInt(6);
    for (int i = 0; i < n; i++) {
      int kind = random.nextInt(6);
      if (kind == 0) {
        s.appendCodePoint(random.nextInt(0x80));
      } else if (kind == 1) {
        s.appendCodePoint(0x80 + random.nextInt(0x800 - 0x80));
      } else if (kind == 2) {
        int cp = 0x800 + random.nextInt(0x10000 - 0x800);
        s.appendCodePoint(Character.isSurrogate((char) cp) ? 0xfffd : cp);
      } else if (kind == 3) {
        s.appendCodePoint(0x10000 + random.nextInt(0x110000 - 0x10000));
      } else {
        s.append(NAMES[random.nextInt(NAMES.length)]);
      }
    }
    spell(s.toString(), sb);
  }

  /** Writes {@code s} as a JSON string, escaping at random; with faults, lone surrogates and raw controls. */
  private void spell(String s, StringBuilder sb) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (fault()) {
        String[] bad = {"\\ud800", "\\udc00", "\\uD83D", "\\u12", "\\x41", "\\U0041", "\u0001", "\t", "\\", "\""};
        sb.append(bad[random.nextInt(bad.length)]);
      }
      if (c == '"' || c == '\\' || c < 0x20 || random.nextInt(6) == 0) {
        String[] shortForms = {"\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"};
        String shortForm = null;
        for (String f : shortForms) {
          if (unescape(f) == c) {
            shortForm = f;
          }
        }
        sb.append(shortForm != null && random.nextBoolean() ? shortForm
            : String.format(random.nextBoolean() ? "\\u%04x" : "\\u%04X", (int) c));
      } else {
        sb.append(c);
      }
    }
    sb.append('"');
  }

  private static char unescape(String shortForm) {
    return "\"\\/\b\f\n\r\t".charAt("\"\\/bfnrt".indexOf(shortForm.charAt(1)));
  }

  private void whitespace(StringBuilder sb) {
    if (fault()) {
      sb.append(BAD_WHITESPACE[random.nextInt(BAD_WHITESPACE.length)]);
    }
    String[] ws = {"", "", "", " ", "\n", "\t", "\r\n", "  "};
    sb.append(ws[random.nextInt(ws.length)]);
  }

  private String number() {
    switch (random.nextInt(8)) {
      case 0:
        return Integer.toString(random.nextInt(2001) - 1000);
      case 1:
        return Double.toString(Double.longBitsToDouble(random.nextLong()));
      case 2:
        return halfway();
      case 3:
        return new String[] {"1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1e309",
            "2.4703282292062327e-324", "2.4703282292062328e-324", "4.9e-324", "1e-400", "-0", "-0.0e-0",
            "9007199254740993", "1e21", "1e-7", "123456789012345678901234567890", "0.1e1", "100E-2"}[
            random.nextInt(16)];
      default:
        return shape();
    }
  }

  /** Sign, integer, fraction and exponent parts, each sometimes malformed or very long. */
  private String shape() {
    StringBuilder sb = new StringBuilder();
    if (random.nextInt(3) == 0) {
      sb.append(fault() ? "+" : "-");
    }
    if (fault()) {
      sb.append(random.nextBoolean() ? "0" + digits(1 + random.nextInt(3)) : "");
    } else {
      sb.append(random.nextInt(4) == 0 ? "0" : (1 + random.nextInt(9)) + digits(randomLength()));
    }
    if (random.nextBoolean()) {
      sb.append('.').append(fault() ? "" : digits(1 + randomLength()));
    }
    if (random.nextBoolean()) {
      sb.append(random.nextBoolean() ? 'e' : 'E');
      int sign = random.nextInt(3);
      sb.append(sign == 0 ? "" : sign == 1 ? "+" : "-");
      sb.append(fault() ? "" : random.nextInt(20) == 0 ? digits(12) : Integer.toString(random.nextInt(400)));
    }
    return sb.toString();
  }

  private int randomLength() {
    return random.nextInt(10) == 0 ? random.nextInt(800) : random.nextInt(20);
  }

  private String digits(int n) {
    StringBuilder sb = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      sb.append((char) ('0' + random.nextInt(10)));
    }
    return sb.toString();
  }

  /** The exact decimal halfway between a random double and the next one, or a hair either side of it. */
  private String halfway() {
    double d = Math.abs(Double.longBitsToDouble(random.nextLong()));
    if (Double.isNaN(d) || Double.isInfinite(d) || d == Double.MAX_VALUE) {
      d = random.nextDouble() * 1e6;
    }
    BigDecimal mid = new BigDecimal(d).add(new BigDecimal(Math.nextUp(d))).divide(BigDecimal.valueOf(2));
    BigDecimal hair = BigDecimal.ONE.movePointLeft(mid.scale() + 5);
    switch (random.nextInt(3)) {
      case 0:
        return mid.toString();
      case 1:
        return mid.add(hair).toString();
      default:
        return mid.subtract(hair).toString();
    }
  }

  private static byte[] insert(byte[] b, int at, byte[] x) {
    return concat(concat(Arrays.copyOf(b, at), x), Arrays.copyOfRange(b, at, b.length));
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }
}
