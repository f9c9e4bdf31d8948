package dev.idem.core.internal.json;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Writes a tree of plain Java objects as RFC 8785 canonical JSON: members sorted by UTF-16 code units, no
 * whitespace, ECMAScript number formatting, minimal string escaping. Accepts what {@link JsonParser} produces and a
 * little more:
 * <ul>
 *   <li>{@link Map} with {@link String} keys; {@link List}; {@link String}; {@link Boolean};
 *   <li>{@link Number}: written as the IEEE 754 double it converts to, as RFC 8785 requires (a {@code long} beyond
 *       2^53 loses precision: send it as a string if it must stay exact); {@code Integer}, {@code Long},
 *       {@code Short}, {@code Byte} and {@link BigInteger}/{@link BigDecimal} within 2^53 are exact;
 *   <li>{@link JsonNull#INSTANCE} or Java {@code null}: {@code null}.
 * </ul>
 * Throws {@link IllegalArgumentException} for NaN, infinities, lone surrogates in strings, non-string keys, other
 * types, and nesting deeper than {@value #MAX_DEPTH} (which catches cycles). Thread-safe (stateless).
 */
public final class JsonWriter {
  /** Deepest nesting accepted. */
  public static final int MAX_DEPTH = 1024;

  private static final long EXACT_LIMIT = 1L << 53;

  private JsonWriter() {}

  /** The canonical JSON text of {@code tree}. */
  public static String write(Object tree) {
    ByteSink sink = new ByteSink(256);
    write(tree, sink);
    return new String(sink.array(), 0, sink.size(), StandardCharsets.UTF_8);
  }

  /** The canonical JSON of {@code tree} as UTF-8. */
  public static byte[] writeUtf8(Object tree) {
    ByteSink sink = new ByteSink(256);
    write(tree, sink);
    return sink.toByteArray();
  }

  /** Appends the canonical JSON of {@code tree} to {@code sink}. */
  public static void write(Object tree, ByteSink sink) {
    value(tree, sink, 0);
  }

  private static void value(Object v, ByteSink out, int depth) {
    if (v == null || v == JsonNull.INSTANCE) {
      out.writeAscii("null");
    } else if (v instanceof String) {
      string((String) v, out);
    } else if (v instanceof Boolean) {
      out.writeAscii((Boolean) v ? "true" : "false");
    } else if (v instanceof Number) {
      number((Number) v, out);
    } else if (v instanceof Map) {
      checkDepth(depth);
      Map<?, ?> map = (Map<?, ?>) v;
      String[] keys = new String[map.size()];
      int i = 0;
      for (Object k : map.keySet()) {
        if (!(k instanceof String)) {
          throw new IllegalArgumentException("JSON member names must be strings, got " + (k == null ? "null" : k.getClass().getName()));
        }
        keys[i++] = (String) k;
      }
      Arrays.sort(keys);
      out.write('{');
      for (i = 0; i < keys.length; i++) {
        if (i > 0) {
          out.write(',');
        }
        string(keys[i], out);
        out.write(':');
        value(map.get(keys[i]), out, depth + 1);
      }
      out.write('}');
    } else if (v instanceof List) {
      checkDepth(depth);
      out.write('[');
      boolean first = true;
      for (Object e : (List<?>) v) {
        if (!first) {
          out.write(',');
        }
        first = false;
        value(e, out, depth + 1);
      }
      out.write(']');
    } else {
      throw new IllegalArgumentException("cannot write " + v.getClass().getName() + " as JSON");
    }
  }

  private static void checkDepth(int depth) {
    if (depth >= MAX_DEPTH) {
      throw new IllegalArgumentException("JSON tree nested deeper than " + MAX_DEPTH + " levels (is it cyclic?)");
    }
  }

  private static void number(Number n, ByteSink out) {
    if (n instanceof Integer || n instanceof Long || n instanceof Short || n instanceof Byte) {
      long l = n.longValue();
      if (l > -EXACT_LIMIT && l < EXACT_LIMIT) {
        if (l < 0) {
          out.write('-');
          l = -l;
        }
        out.writeAscii(Long.toString(l));
        return;
      }
    }
    double d = n.doubleValue();
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      throw new IllegalArgumentException("JSON has no representation for " + n + " (RFC 8785 forbids NaN and Infinity)");
    }
    EcmaNumbers.write(d, out);
  }

  private static void string(String s, ByteSink out) {
    out.write('"');
    int len = s.length();
    for (int i = 0; i < len; i++) {
      char c = s.charAt(i);
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
          CanonicalWriter.writeUtf8(out, Character.toCodePoint(c, s.charAt(++i)));
          continue;
        }
        throw new IllegalArgumentException(String.format("lone surrogate U+%04X at index %d of a string (not allowed by I-JSON)", (int) c, i));
      }
      CanonicalWriter.writeCodePoint(out, c);
    }
    out.write('"');
  }
}
