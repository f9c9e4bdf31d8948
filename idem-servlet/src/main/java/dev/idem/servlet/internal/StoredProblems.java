package dev.idem.servlet.internal;

import dev.idem.servlet.Problem;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The code of a problem document sent from its bytes (a kept or replayed answer), so that the filter can announce
 * it to the response's listeners like {@link Problem#write} does. Internal.
 */
public final class StoredProblems {
  /** How much of the document is looked at. */
  static final int PREFIX_BYTES = 1024;
  private static final int MAX_CODE_LENGTH = 100;

  private StoredProblems() {}

  /**
   * The problem code of an answer: null unless its {@code Content-Type} is {@code application/problem+json} and one
   * of its first {@value #PREFIX_BYTES} bytes open a {@code code} member (or an {@code urn:idem:problem:} type) with a
   * plain code ({@code [A-Za-z0-9_.-]}, at most 100 characters).
   */
  public static String code(Map<String, List<String>> headers, byte[] body) {
    if (body.length == 0 || !isProblem(headers)) {
      return null;
    }
    String text = new String(body, 0, Math.min(body.length, PREFIX_BYTES), StandardCharsets.ISO_8859_1);
    String code = member(text, "\"code\":\"");
    return code != null ? code : member(text, "\"type\":\"" + Problem.TYPE_PREFIX);
  }

  private static boolean isProblem(Map<String, List<String>> headers) {
    for (Map.Entry<String, List<String>> h : headers.entrySet()) {
      if (h.getKey().equalsIgnoreCase("content-type") && !h.getValue().isEmpty()) {
        return h.getValue().get(0).trim().toLowerCase(Locale.ROOT).startsWith(Problem.MEDIA_TYPE);
      }
    }
    return false;
  }

  private static String member(String text, String opening) {
    int at = text.indexOf(opening);
    if (at < 0) {
      return null;
    }
    int start = at + opening.length();
    for (int end = start; end < text.length() && end - start <= MAX_CODE_LENGTH; end++) {
      char c = text.charAt(end);
      if (c == '"') {
        return end > start ? text.substring(start, end) : null;
      }
      if (!(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.'
          || c == '-')) {
        return null;
      }
    }
    return null;
  }
}
