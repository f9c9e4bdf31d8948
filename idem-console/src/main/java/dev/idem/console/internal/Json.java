package dev.idem.console.internal;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The little JSON the console needs: documents written from maps, lists, strings, numbers, booleans and nulls, and
 * request bodies read into the same (objects as {@link LinkedHashMap}, numbers as {@link BigDecimal}, JSON
 * {@code null} as Java {@code null}). The reader is strict (RFC 8259) and refuses nesting deeper than
 * {@link #MAX_DEPTH}. Stateless.
 */
public final class Json {
  /** The deepest nesting a body may have. */
  public static final int MAX_DEPTH = 32;

  private Json() {}

  /** A mutable document of name/value pairs, in order. */
  public static Map<String, Object> document(Object... pairs) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      out.put((String) pairs[i], pairs[i + 1]);
    }
    return out;
  }

  /** The value as UTF-8 JSON text. */
  public static byte[] write(Object value) {
    StringBuilder out = new StringBuilder(256);
    append(out, value);
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void append(StringBuilder out, Object v) {
    if (v == null) {
      out.append("null");
    } else if (v instanceof String s) {
      string(out, s);
    } else if (v instanceof Boolean || v instanceof Integer || v instanceof Long || v instanceof BigDecimal) {
      out.append(v);
    } else if (v instanceof Double d) {
      out.append(d.isNaN() || d.isInfinite() ? "null" : d.toString());
    } else if (v instanceof Map<?, ?> map) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        string(out, (String) e.getKey());
        out.append(':');
        append(out, e.getValue());
      }
      out.append('}');
    } else if (v instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          out.append(',');
        }
        append(out, list.get(i));
      }
      out.append(']');
    } else if (v instanceof Number n) {
      out.append(n.toString());
    } else {
      throw new IllegalArgumentException("no JSON for a " + v.getClass().getName());
    }
  }

  private static void string(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          // < and > escaped too: a document never closes a script element it is pasted into
          if (c < 0x20 || c == '<' || c == '>' || c == '&' || c == 0x2028 || c == 0x2029) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }

  /**
   * Reads one JSON value that fills the whole text.
   *
   * @throws IllegalArgumentException with the position, when the text is not JSON or nests too deep
   */
  public static Object read(String text) {
    Reader r = new Reader(text);
    r.space();
    Object v = r.value(0);
    r.space();
    if (r.at < text.length()) {
      throw r.error("text after the value");
    }
    return v;
  }

  private static final class Reader {
    private final String text;
    private int at;

    Reader(String text) {
      this.text = text;
    }

    IllegalArgumentException error(String what) {
      return new IllegalArgumentException("not JSON: " + what + " at character " + at);
    }

    void space() {
      while (at < text.length()) {
        char c = text.charAt(at);
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
          return;
        }
        at++;
      }
    }

    Object value(int depth) {
      if (depth > MAX_DEPTH) {
        throw error("nesting deeper than " + MAX_DEPTH);
      }
      if (at >= text.length()) {
        throw error("end of text");
      }
      char c = text.charAt(at);
      switch (c) {
        case '{':
          return object(depth);
        case '[':
          return array(depth);
        case '"':
          return string();
        case 't':
          return literal("true", Boolean.TRUE);
        case 'f':
          return literal("false", Boolean.FALSE);
        case 'n':
          return literal("null", null);
        default:
          return number();
      }
    }

    private Object literal(String word, Object value) {
      if (!text.startsWith(word, at)) {
        throw error("an unknown word");
      }
      at += word.length();
      return value;
    }

    private Map<String, Object> object(int depth) {
      Map<String, Object> out = new LinkedHashMap<>();
      at++;
      space();
      if (at < text.length() && text.charAt(at) == '}') {
        at++;
        return out;
      }
      while (true) {
        space();
        if (at >= text.length() || text.charAt(at) != '"') {
          throw error("a member name expected");
        }
        String name = string();
        space();
        expect(':');
        space();
        if (out.containsKey(name)) {
          throw error("member \"" + name + "\" twice");
        }
        out.put(name, value(depth + 1));
        space();
        if (at < text.length() && text.charAt(at) == ',') {
          at++;
          continue;
        }
        expect('}');
        return out;
      }
    }

    private List<Object> array(int depth) {
      List<Object> out = new ArrayList<>();
      at++;
      space();
      if (at < text.length() && text.charAt(at) == ']') {
        at++;
        return out;
      }
      while (true) {
        space();
        out.add(value(depth + 1));
        space();
        if (at < text.length() && text.charAt(at) == ',') {
          at++;
          continue;
        }
        expect(']');
        return out;
      }
    }

    private void expect(char c) {
      if (at >= text.length() || text.charAt(at) != c) {
        throw error("'" + c + "' expected");
      }
      at++;
    }

    private String string() {
      at++;
      StringBuilder out = new StringBuilder();
      while (true) {
        if (at >= text.length()) {
          throw error("an unterminated string");
        }
        char c = text.charAt(at++);
        if (c == '"') {
          return out.toString();
        }
        if (c < 0x20) {
          throw error("a control character in a string");
        }
        if (c != '\\') {
          out.append(c);
          continue;
        }
        if (at >= text.length()) {
          throw error("an unterminated escape");
        }
        char e = text.charAt(at++);
        switch (e) {
          case '"', '\\', '/' -> out.append(e);
          case 'b' -> out.append('\b');
          case 'f' -> out.append('\f');
          case 'n' -> out.append('\n');
          case 'r' -> out.append('\r');
          case 't' -> out.append('\t');
          case 'u' -> {
            if (at + 4 > text.length()) {
              throw error("a short \\u escape");
            }
            try {
              out.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
            } catch (NumberFormatException ex) {
              throw error("a bad \\u escape");
            }
            at += 4;
          }
          default -> throw error("a bad escape");
        }
      }
    }

    private static boolean digit(char c) {
      return c >= '0' && c <= '9';
    }

    private BigDecimal number() {
      int start = at;
      if (at < text.length() && text.charAt(at) == '-') {
        at++;
      }
      int digits = at;
      while (at < text.length() && digit(text.charAt(at))) {
        at++;
      }
      if (at == digits || (text.charAt(digits) == '0' && at - digits > 1)) {
        throw error("a bad number");
      }
      if (at < text.length() && text.charAt(at) == '.') {
        at++;
        int fraction = at;
        while (at < text.length() && digit(text.charAt(at))) {
          at++;
        }
        if (at == fraction) {
          throw error("a bad number");
        }
      }
      if (at < text.length() && (text.charAt(at) == 'e' || text.charAt(at) == 'E')) {
        at++;
        if (at < text.length() && (text.charAt(at) == '+' || text.charAt(at) == '-')) {
          at++;
        }
        int exponent = at;
        while (at < text.length() && digit(text.charAt(at))) {
          at++;
        }
        if (at == exponent || at - exponent > 4) {
          throw error("a bad exponent");
        }
      }
      return new BigDecimal(text.substring(start, at));
    }
  }
}
