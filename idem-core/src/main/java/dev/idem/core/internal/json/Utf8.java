package dev.idem.core.internal.json;

import java.nio.charset.StandardCharsets;

/** UTF-8 helpers. Thread-safe (stateless). */
public final class Utf8 {
  private Utf8() {}

  /**
   * Encodes {@code s} as UTF-8, except that a lone surrogate is encoded as its three-byte form (ED A0..BF xx), which is
   * not UTF-8: the JSON scanner then rejects it with its position, where {@link String#getBytes} would have replaced
   * it with {@code ?} silently.
   */
  public static byte[] encode(String s) {
    int len = s.length();
    boolean surrogates = false;
    for (int i = 0; i < len; i++) {
      if (Character.isSurrogate(s.charAt(i))) {
        surrogates = true;
        break;
      }
    }
    if (!surrogates) {
      return s.getBytes(StandardCharsets.UTF_8);
    }
    ByteSink out = new ByteSink(len * 3);
    for (int i = 0; i < len; i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < len && Character.isLowSurrogate(s.charAt(i + 1))) {
        CanonicalWriter.writeUtf8(out, Character.toCodePoint(c, s.charAt(++i)));
      } else {
        CanonicalWriter.writeUtf8(out, c);
      }
    }
    return out.toByteArray();
  }
}
