package dev.idem.core.internal.json;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;

/**
 * Test data: jqwik arbitraries for JSON trees (the {@link JsonParser} model) and a writer that spells a tree as
 * valid but deliberately non-canonical JSON: shuffled members, random whitespace, random escapes, and many spellings
 * of each number.
 */
public final class JsonTrees {
  private static final String[] ATOMS = {
    "a", "b", "z", "A", "0", "1", "~", "/", " ", "\"", "\\", "\n", "\t", "\r", "\b", "\f", "\u0000", "\u001f",
    "\u007f", "\u0080", "é", "ö", "€", "\u2028", "\uE000", "\uFB33", "\uFFFF", "😀", "\uD834\uDD1E", "id", "amount",
  };

  private JsonTrees() {}

  /** Strings made of tricky pieces: escapes, controls, non-ASCII, surrogate pairs; no lone surrogates. */
  public static Arbitrary<String> strings() {
    return Arbitraries.of(ATOMS).list().ofMaxSize(6).map(parts -> String.join("", parts));
  }

  /** Member names: short, often colliding prefixes, so sorting is exercised. */
  public static Arbitrary<String> names() {
    return Arbitraries.oneOf(
        Arbitraries.of(ATOMS).list().ofMinSize(0).ofMaxSize(3).map(parts -> String.join("", parts)),
        Arbitraries.strings().withCharRange('a', 'e').ofMaxLength(3));
  }

  /** Finite doubles of every kind: integers, prices, random bit patterns (subnormals included), extremes. */
  public static Arbitrary<Double> numbers() {
    return Arbitraries.oneOf(
        Arbitraries.integers().between(-1_000_000, 1_000_000).map(i -> (double) i),
        Arbitraries.bigDecimals().between(new BigDecimal("-100000"), new BigDecimal("100000")).ofScale(2)
            .map(BigDecimal::doubleValue),
        Arbitraries.longs().map(Double::longBitsToDouble).filter(d -> !Double.isNaN(d) && !Double.isInfinite(d)),
        Arbitraries.of(0.0, -0.0, Double.MIN_VALUE, -Double.MIN_VALUE, Double.MAX_VALUE, Double.MIN_NORMAL, 1e21, 1e-7,
            9007199254740992.0, 0.1, 1e23, 5e-324));
  }

  /** JSON trees up to {@code depth} levels of containers. */
  public static Arbitrary<Object> values(int depth) {
    Arbitrary<Object> scalars = Arbitraries.oneOf(
        strings().map(s -> (Object) s),
        numbers().map(d -> (Object) d),
        Arbitraries.of(Boolean.TRUE, Boolean.FALSE, JsonNull.INSTANCE));
    if (depth == 0) {
      return scalars;
    }
    Arbitrary<Object> child = Arbitraries.lazy(() -> values(depth - 1));
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(3, scalars),
        net.jqwik.api.Tuple.of(1, child.list().ofMaxSize(4).map(l -> (Object) l)),
        net.jqwik.api.Tuple.of(2, objects(depth - 1).map(m -> (Object) m)));
  }

  /** JSON objects up to {@code depth} further levels of containers. */
  public static Arbitrary<Map<String, Object>> objects(int depth) {
    Arbitrary<Object> child = depth < 0 ? values(0) : Arbitraries.lazy(() -> values(depth));
    return Arbitraries.maps(names(), child).ofMaxSize(5).map(LinkedHashMap::new);
  }

  /** Spells {@code tree} as valid, non-canonical JSON, choosing every variation with {@code random}. */
  public static String spell(Object tree, Random random) {
    StringBuilder sb = new StringBuilder();
    spell(tree, sb, random);
    whitespace(sb, random);
    return sb.toString();
  }

  private static void spell(Object v, StringBuilder sb, Random r) {
    whitespace(sb, r);
    if (v == null || v == JsonNull.INSTANCE) {
      sb.append("null");
    } else if (v instanceof Boolean) {
      sb.append(v);
    } else if (v instanceof String) {
      spellString((String) v, sb, r);
    } else if (v instanceof Number) {
      sb.append(spellNumber(((Number) v).doubleValue(), r));
    } else if (v instanceof Map) {
      List<Map.Entry<?, ?>> entries = new ArrayList<>(((Map<?, ?>) v).entrySet());
      Collections.shuffle(entries, r);
      sb.append('{');
      for (int i = 0; i < entries.size(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        whitespace(sb, r);
        spellString((String) entries.get(i).getKey(), sb, r);
        whitespace(sb, r);
        sb.append(':');
        spell(entries.get(i).getValue(), sb, r);
        whitespace(sb, r);
      }
      whitespace(sb, r);
      sb.append('}');
    } else if (v instanceof List) {
      List<?> list = (List<?>) v;
      sb.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        spell(list.get(i), sb, r);
        whitespace(sb, r);
      }
      whitespace(sb, r);
      sb.append(']');
    } else {
      throw new IllegalArgumentException(v.getClass().getName());
    }
  }

  private static void whitespace(StringBuilder sb, Random r) {
    String[] ws = {"", "", "", " ", "\n", "\t", "\r\n", "  "};
    sb.append(ws[r.nextInt(ws.length)]);
  }

  private static void spellString(String s, StringBuilder sb, Random r) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      int choice = r.nextInt(4);
      if (Character.isHighSurrogate(c)) {
        char low = s.charAt(++i);
        if (choice == 0) {
          sb.append(String.format(r.nextBoolean() ? "\\u%04x\\u%04x" : "\\u%04X\\u%04X", (int) c, (int) low));
        } else {
          sb.append(c).append(low);
        }
      } else if (c == '"' || c == '\\' || c < 0x20 || choice == 0) {
        String shortEscape = shortEscape(c);
        if (shortEscape != null && r.nextBoolean()) {
          sb.append(shortEscape);
        } else {
          sb.append(String.format(r.nextBoolean() ? "\\u%04x" : "\\u%04X", (int) c));
        }
      } else if (c == '/' && choice == 1) {
        sb.append("\\/");
      } else {
        sb.append(c);
      }
    }
    sb.append('"');
  }

  private static String shortEscape(char c) {
    switch (c) {
      case '"': return "\\\"";
      case '\\': return "\\\\";
      case '/': return "\\/";
      case '\b': return "\\b";
      case '\f': return "\\f";
      case '\n': return "\\n";
      case '\r': return "\\r";
      case '\t': return "\\t";
      default: return null;
    }
  }

  /** One of many JSON spellings of {@code d}, all of which read as {@code d}. */
  public static String spellNumber(double d, Random r) {
    List<String> forms = numberSpellings(d);
    return forms.get(r.nextInt(forms.size()));
  }

  /** Every JSON spelling of {@code d} this class knows. */
  public static List<String> numberSpellings(double d) {
    List<String> forms = new ArrayList<>();
    if (d == 0) {
      forms.addAll(List.of("0", "-0", "0.0", "-0.0", "0e0", "0E+5", "-0.000e-12"));
      return forms;
    }
    BigDecimal shortest = ReferenceNumbers.shortest(d);
    String sign = shortest.signum() < 0 ? "-" : "";
    BigDecimal abs = shortest.abs();
    String digits = abs.unscaledValue().toString();
    int exponent = -abs.scale();
    forms.add(Double.toString(d));
    forms.add(shortest.toString());
    forms.add(sign + digits + "e" + exponent);
    forms.add(sign + digits + "000E" + (exponent >= 3 ? "+" : "") + (exponent - 3));
    forms.add(sign + "0." + digits + "e" + (exponent + digits.length()));
    forms.add(sign + digits.charAt(0) + "." + digits.substring(1) + "0e" + (exponent + digits.length() - 1));
    if (Math.abs(exponent) < 40) {
      forms.add(shortest.toPlainString());
    }
    if (Math.abs(d) > 1e-30 && Math.abs(d) < 1e30) {
      forms.add(new BigDecimal(d).toString());
    }
    forms.removeIf(f -> f.contains(".e") || f.contains(".E") || f.endsWith("."));
    return forms;
  }
}
