package dev.idem.core.internal.json;

import java.util.ArrayList;
import java.util.List;

/** Parsing of JSON Pointers (RFC 6901) into reference tokens. Thread-safe (stateless). */
public final class JsonPointer {
  private JsonPointer() {}

  /**
   * The unescaped reference tokens of {@code pointer}: {@code ""} (the whole document) has none, {@code "/a~1b/0"}
   * has {@code a/b} and {@code 0}.
   *
   * @throws IllegalArgumentException with the reason when {@code pointer} is not a valid JSON Pointer
   */
  public static List<String> parse(String pointer) {
    if (pointer.isEmpty()) {
      return List.of();
    }
    if (pointer.charAt(0) != '/') {
      throw new IllegalArgumentException("a JSON Pointer (RFC 6901) is empty or starts with '/'");
    }
    List<String> tokens = new ArrayList<>();
    StringBuilder token = new StringBuilder();
    for (int i = 1; i <= pointer.length(); i++) {
      if (i == pointer.length() || pointer.charAt(i) == '/') {
        tokens.add(token.toString());
        token.setLength(0);
        continue;
      }
      char c = pointer.charAt(i);
      if (c == '~') {
        char e = i + 1 < pointer.length() ? pointer.charAt(i + 1) : 0;
        if (e == '0') {
          token.append('~');
        } else if (e == '1') {
          token.append('/');
        } else {
          throw new IllegalArgumentException("'~' at index " + i + " must be followed by '0' or '1' (RFC 6901 escapes ~0 and ~1)");
        }
        i++;
      } else if (Character.isHighSurrogate(c) && i + 1 < pointer.length() && Character.isLowSurrogate(pointer.charAt(i + 1))) {
        token.append(c).append(pointer.charAt(i + 1));
        i++;
      } else if (Character.isSurrogate(c)) {
        throw new IllegalArgumentException("lone surrogate at index " + i);
      } else {
        token.append(c);
      }
    }
    return tokens;
  }

  /** Escapes one reference token ({@code ~} as {@code ~0}, {@code /} as {@code ~1}). */
  public static String escape(String token) {
    return token.replace("~", "~0").replace("/", "~1");
  }
}
