package dev.idem.core.internal.json;

import dev.idem.core.fingerprint.MalformedJsonException;
import java.nio.charset.StandardCharsets;

/**
 * The scanner's internal signal for invalid input: no stack trace, and no line/column work until someone needs the
 * public {@link MalformedJsonException} (the fingerprinter falls back to hashing raw bytes without ever building it).
 */
final class JsonSyntaxError extends RuntimeException {
  private static final long serialVersionUID = 1L;

  final int offset;
  final String reason;

  JsonSyntaxError(int offset, String reason) {
    super(reason, null, false, false);
    this.offset = offset;
    this.reason = reason;
  }

  MalformedJsonException toMalformed(byte[] src) {
    return malformed(src, offset, reason);
  }

  /** Builds the public exception, computing the 1-based line and code-point column of {@code offset}. */
  static MalformedJsonException malformed(byte[] src, int offset, String reason) {
    int line = 1;
    int lineStart = 0;
    int limit = Math.min(offset, src.length);
    for (int i = 0; i < limit; i++) {
      if (src[i] == '\n') {
        line++;
        lineStart = i + 1;
      }
    }
    int column = 1;
    for (int i = lineStart; i < limit; i++) {
      if ((src[i] & 0xC0) != 0x80) {
        column++;
      }
    }
    return new MalformedJsonException(reason, line, column, offset);
  }

  /** A short, printable description of the byte at {@code offset} for messages. */
  static String describe(byte[] src, int offset) {
    if (offset >= src.length) {
      return "end of input";
    }
    int b = src[offset] & 0xff;
    if (b >= 0x21 && b < 0x7f) {
      return "character '" + (char) b + "'";
    }
    if (b < 0x80) {
      return String.format("character U+%04X", b);
    }
    int len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    if (len > 1 && offset + len <= src.length) {
      String s = new String(src, offset, len, StandardCharsets.UTF_8);
      int cp = s.codePointAt(0);
      if (cp != 0xFFFD && s.length() == Character.charCount(cp)) {
        return String.format("character U+%04X '%s'", cp, s);
      }
    }
    return String.format("byte 0x%02X", b);
  }
}
