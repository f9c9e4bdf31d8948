package dev.idem.jdbc.internal;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** Headers in one text column: a {@code name: value} line each. Names are tokens and values have no line breaks. */
public final class HeaderCodec {
  private HeaderCodec() {}

  public static String encode(Map<String, String> headers) {
    if (headers.isEmpty()) {
      return null;
    }
    StringBuilder b = new StringBuilder();
    headers.forEach((k, v) -> b.append(k).append(": ").append(v).append('\n'));
    return b.toString();
  }

  public static Map<String, String> decode(String text) {
    if (text == null || text.isEmpty()) {
      return Map.of();
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      int colon = line.indexOf(": ");
      if (colon > 0) {
        headers.put(line.substring(0, colon), line.substring(colon + 2));
      }
    }
    return Collections.unmodifiableMap(headers);
  }
}
