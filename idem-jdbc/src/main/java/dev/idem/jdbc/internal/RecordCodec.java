package dev.idem.jdbc.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The text columns of a record: flat JSON objects whose values are strings (field hashes, checkpoints) or arrays of
 * strings (response headers). Written and read here, with nothing else allowed, so a column that was tampered with
 * fails loudly instead of being half-read.
 */
public final class RecordCodec {
  private RecordCodec() {}

  /** {@code {"name":"value",...}}, or {@code null} for an empty map. */
  public static String encodeMap(Map<String, String> map) {
    if (map.isEmpty()) {
      return null;
    }
    StringBuilder sb = new StringBuilder(map.size() * 48);
    sb.append('{');
    boolean first = true;
    for (Map.Entry<String, String> e : map.entrySet()) {
      if (!first) {
        sb.append(',');
      }
      first = false;
      quote(sb, e.getKey());
      sb.append(':');
      quote(sb, e.getValue());
    }
    return sb.append('}').toString();
  }

  /** {@code {"name":["v1","v2"],...}}, or {@code null} for no headers. */
  public static String encodeHeaders(Map<String, List<String>> headers) {
    if (headers.isEmpty()) {
      return null;
    }
    StringBuilder sb = new StringBuilder(headers.size() * 48);
    sb.append('{');
    boolean first = true;
    for (Map.Entry<String, List<String>> e : headers.entrySet()) {
      if (!first) {
        sb.append(',');
      }
      first = false;
      quote(sb, e.getKey());
      sb.append(":[");
      for (int i = 0; i < e.getValue().size(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        quote(sb, e.getValue().get(i));
      }
      sb.append(']');
    }
    return sb.append('}').toString();
  }

  public static Map<String, String> decodeMap(String text) {
    Map<String, String> out = new LinkedHashMap<>();
    if (text == null || text.isEmpty()) {
      return out;
    }
    Reader r = new Reader(text);
    r.expect('{');
    if (!r.consume('}')) {
      do {
        String name = r.string();
        r.expect(':');
        out.put(name, r.string());
      } while (r.consume(','));
      r.expect('}');
    }
    r.end();
    return out;
  }

  public static Map<String, List<String>> decodeHeaders(String text) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    if (text == null || text.isEmpty()) {
      return out;
    }
    Reader r = new Reader(text);
    r.expect('{');
    if (!r.consume('}')) {
      do {
        String name = r.string();
        r.expect(':');
        r.expect('[');
        List<String> values = new ArrayList<>(1);
        if (!r.consume(']')) {
          do {
            values.add(r.string());
          } while (r.consume(','));
          r.expect(']');
        }
        out.put(name, values);
      } while (r.consume(','));
      r.expect('}');
    }
    r.end();
    return out;
  }

  private static void quote(StringBuilder sb, String s) {
    sb.append('"');
    if (plain(s)) {
      sb.append(s).append('"');
      return;
    }
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          sb.append("\\\"");
          break;
        case '\\':
          sb.append("\\\\");
          break;
        default:
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    sb.append('"');
  }

  /** Whether the string needs no escape (the common case: hex hashes, header values). */
  private static boolean plain(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == '"' || c == '\\') {
        return false;
      }
    }
    return true;
  }

  private static final class Reader {
    private final String text;
    private int at;

    Reader(String text) {
      this.text = text;
    }

    void expect(char c) {
      if (at >= text.length() || text.charAt(at) != c) {
        throw fail("expected '" + c + "'");
      }
      at++;
    }

    boolean consume(char c) {
      if (at < text.length() && text.charAt(at) == c) {
        at++;
        return true;
      }
      return false;
    }

    void end() {
      if (at != text.length()) {
        throw fail("unexpected trailing text");
      }
    }

    String string() {
      expect('"');
      // the usual value (a header, a hex hash) has no escape: take it whole
      for (int i = at; i < text.length(); i++) {
        char c = text.charAt(i);
        if (c == '"') {
          String plain = text.substring(at, i);
          at = i + 1;
          return plain;
        }
        if (c == '\\') {
          break;
        }
      }
      StringBuilder sb = new StringBuilder();
      while (true) {
        if (at >= text.length()) {
          throw fail("unterminated string");
        }
        char c = text.charAt(at++);
        if (c == '"') {
          return sb.toString();
        }
        if (c != '\\') {
          sb.append(c);
          continue;
        }
        if (at >= text.length()) {
          throw fail("unterminated escape");
        }
        char e = text.charAt(at++);
        if (e == 'u' && at + 4 <= text.length()) {
          try {
            sb.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
          } catch (NumberFormatException nfe) {
            throw fail("bad \\u escape");
          }
          at += 4;
        } else if (e == '"' || e == '\\') {
          sb.append(e);
        } else {
          throw fail("bad escape \\" + e);
        }
      }
    }

    private IllegalStateException fail(String what) {
      return new IllegalStateException("stored record column is corrupt at offset " + at + ": " + what);
    }
  }
}
