package dev.idem.core.fuzz;

import dev.idem.core.internal.json.ReferenceNumbers;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A second JSON canonicaliser (RFC 8785 over I-JSON, as docs/fingerprint.md defines it), written to be obviously
 * correct rather than fast: the JDK's strict UTF-8 decoder, a recursive descent over the decoded text into maps,
 * lists and doubles, the RFC 8259 number grammar as a regular expression read by {@link Double#parseDouble}, a
 * {@link TreeMap} for member order ({@link String#compareTo} is UTF-16 code unit order), and {@link ReferenceNumbers}
 * for ECMAScript number text. Shares no code with the production canonicaliser.
 */
final class SlowCanonicalizer {
  /** The deepest nesting of objects and arrays accepted. */
  static final int MAX_DEPTH = 256;
  private static final Pattern NUMBER = Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?");
  private static final String HEX = "0123456789abcdefABCDEF";
  private static final Object NULL = new Object();

  /** The input is not I-JSON. */
  static final class Rejected extends Exception {
    private static final long serialVersionUID = 1L;

    Rejected(String reason) {
      super(reason, null, false, false);
    }
  }

  private final String text;
  private int at;

  private SlowCanonicalizer(String text) {
    this.text = text;
  }

  static byte[] canonicalize(byte[] utf8) throws Rejected {
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(utf8)).toString();
    } catch (CharacterCodingException e) {
      throw new Rejected("not UTF-8");
    }
    SlowCanonicalizer parser = new SlowCanonicalizer(text);
    parser.whitespace();
    Object value = parser.value(0);
    parser.whitespace();
    if (parser.at != text.length()) {
      throw new Rejected("text after the value");
    }
    StringBuilder out = new StringBuilder();
    write(value, out);
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private Object value(int depth) throws Rejected {
    if (at >= text.length()) {
      throw new Rejected("expected a value");
    }
    char c = text.charAt(at);
    if ((c == '{' || c == '[') && depth >= MAX_DEPTH) {
      throw new Rejected("too deep");
    }
    if (c == '{') {
      return object(depth + 1);
    }
    if (c == '[') {
      return array(depth + 1);
    }
    if (c == '"') {
      return string();
    }
    if (literal("true")) {
      return Boolean.TRUE;
    }
    if (literal("false")) {
      return Boolean.FALSE;
    }
    if (literal("null")) {
      return NULL;
    }
    Matcher m = NUMBER.matcher(text).region(at, text.length());
    if (!m.lookingAt()) {
      throw new Rejected("expected a value");
    }
    at = m.end();
    double d = Double.parseDouble(m.group());
    if (Double.isInfinite(d)) {
      throw new Rejected("number overflows a double");
    }
    return d;
  }

  private boolean literal(String word) {
    if (text.startsWith(word, at)) {
      at += word.length();
      return true;
    }
    return false;
  }

  private Map<String, Object> object(int depth) throws Rejected {
    Map<String, Object> members = new TreeMap<>();
    at++;
    whitespace();
    if (next(('}'))) {
      return members;
    }
    do {
      whitespace();
      if (at >= text.length() || text.charAt(at) != '"') {
        throw new Rejected("expected a member name");
      }
      String name = string();
      whitespace();
      expect(':');
      whitespace();
      Object value = value(depth);
      if (members.containsKey(name)) {
        throw new Rejected("duplicate member name");
      }
      members.put(name, value);
      whitespace();
    } while (next(','));
    expect('}');
    return members;
  }

  private List<Object> array(int depth) throws Rejected {
    List<Object> elements = new ArrayList<>();
    at++;
    whitespace();
    if (next(']')) {
      return elements;
    }
    do {
      whitespace();
      elements.add(value(depth));
      whitespace();
    } while (next(','));
    expect(']');
    return elements;
  }

  private String string() throws Rejected {
    StringBuilder sb = new StringBuilder();
    at++;
    while (true) {
      if (at >= text.length()) {
        throw new Rejected("unterminated string");
      }
      char c = text.charAt(at++);
      if (c == '"') {
        break;
      }
      if (c < 0x20) {
        throw new Rejected("control character in a string");
      }
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      if (at >= text.length()) {
        throw new Rejected("unterminated escape");
      }
      char e = text.charAt(at++);
      switch (e) {
        case '"': sb.append('"'); break;
        case '\\': sb.append('\\'); break;
        case '/': sb.append('/'); break;
        case 'b': sb.append('\b'); break;
        case 'f': sb.append('\f'); break;
        case 'n': sb.append('\n'); break;
        case 'r': sb.append('\r'); break;
        case 't': sb.append('\t'); break;
        case 'u':
          if (at + 4 > text.length()) {
            throw new Rejected("short \\u escape");
          }
          String hex = text.substring(at, at + 4);
          for (char h : hex.toCharArray()) {
            if (HEX.indexOf(h) < 0) {
              throw new Rejected("bad \\u escape");
            }
          }
          sb.append((char) Integer.parseInt(hex, 16));
          at += 4;
          break;
        default:
          throw new Rejected("bad escape");
      }
    }
    for (int i = 0; i < sb.length(); i++) {
      char c = sb.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < sb.length() && Character.isLowSurrogate(sb.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        throw new Rejected("lone surrogate");
      }
    }
    return sb.toString();
  }

  private void whitespace() {
    while (at < text.length() && " \t\n\r".indexOf(text.charAt(at)) >= 0) {
      at++;
    }
  }

  private boolean next(char c) {
    if (at < text.length() && text.charAt(at) == c) {
      at++;
      return true;
    }
    return false;
  }

  private void expect(char c) throws Rejected {
    if (!next(c)) {
      throw new Rejected("expected '" + c + "'");
    }
  }

  private static void write(Object value, StringBuilder out) {
    if (value == NULL) {
      out.append("null");
    } else if (value instanceof Boolean) {
      out.append(value);
    } else if (value instanceof Double) {
      out.append(ReferenceNumbers.toEcmaScript((Double) value));
    } else if (value instanceof String) {
      writeString((String) value, out);
    } else if (value instanceof Map) {
      out.append('{');
      String separator = "";
      for (Map.Entry<?, ?> member : ((Map<?, ?>) value).entrySet()) {
        out.append(separator);
        writeString((String) member.getKey(), out);
        out.append(':');
        write(member.getValue(), out);
        separator = ",";
      }
      out.append('}');
    } else {
      out.append('[');
      String separator = "";
      for (Object element : (List<?>) value) {
        out.append(separator);
        write(element, out);
        separator = ",";
      }
      out.append(']');
    }
  }

  private static void writeString(String s, StringBuilder out) {
    out.append('"');
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        default:
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
      }
    }
    out.append('"');
  }
}
