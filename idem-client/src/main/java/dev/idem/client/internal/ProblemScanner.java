package dev.idem.client.internal;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Reads the top-level string and boolean members of a JSON object (an RFC 9457 problem document), enough for
 * {@code code}, {@code detail} and {@code retryable}. Tolerant: numbers, nulls, nested objects and arrays are skipped,
 * and anything malformed ends the scan with what was read so far. Reads at most {@link #MAX_BYTES} bytes. Stateless
 * and thread-safe.
 */
public final class ProblemScanner {
  /** Bytes of a body that are scanned; the rest is ignored. */
  public static final int MAX_BYTES = 64 * 1024;

  private final String s;
  private int i;

  private ProblemScanner(String s) {
    this.s = s;
  }

  /** Top-level members whose value is a string ({@link String}) or a boolean ({@link Boolean}). */
  public static Map<String, Object> scan(byte[] body) {
    String text = new String(body, 0, Math.min(body.length, MAX_BYTES), StandardCharsets.UTF_8);
    Map<String, Object> members = new HashMap<>();
    try {
      new ProblemScanner(text).object(members);
    } catch (RuntimeException malformed) {
      // tolerant: keep what was read
    }
    return members;
  }

  private void object(Map<String, Object> out) {
    ws();
    expect('{');
    ws();
    if (peek() == '}') {
      return;
    }
    for (;;) {
      ws();
      String name = string();
      ws();
      expect(':');
      ws();
      char c = peek();
      if (c == '"') {
        out.putIfAbsent(name, string());
      } else if (s.startsWith("true", i)) {
        i += 4;
        out.putIfAbsent(name, Boolean.TRUE);
      } else if (s.startsWith("false", i)) {
        i += 5;
        out.putIfAbsent(name, Boolean.FALSE);
      } else {
        skipValue();
      }
      ws();
      char next = s.charAt(i++);
      if (next == '}') {
        return;
      }
      if (next != ',') {
        throw new IllegalStateException("expected , or }");
      }
    }
  }

  private void skipValue() {
    int depth = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c == '"') {
        string();
        continue;
      }
      if (c == '{' || c == '[') {
        depth++;
      } else if (c == '}' || c == ']') {
        if (depth == 0) {
          return;
        }
        depth--;
      } else if (c == ',' && depth == 0) {
        return;
      }
      i++;
    }
  }

  private String string() {
    expect('"');
    StringBuilder b = new StringBuilder();
    for (;;) {
      char c = s.charAt(i++);
      if (c == '"') {
        return b.toString();
      }
      if (c != '\\') {
        b.append(c);
        continue;
      }
      char e = s.charAt(i++);
      switch (e) {
        case 'n' -> b.append('\n');
        case 't' -> b.append('\t');
        case 'r' -> b.append('\r');
        case 'b' -> b.append('\b');
        case 'f' -> b.append('\f');
        case 'u' -> {
          b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
        }
        default -> b.append(e);
      }
    }
  }

  private void ws() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
  }

  private char peek() {
    return s.charAt(i);
  }

  private void expect(char c) {
    if (s.charAt(i++) != c) {
      throw new IllegalStateException("expected " + c);
    }
  }
}
