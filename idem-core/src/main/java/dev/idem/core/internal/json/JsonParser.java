package dev.idem.core.internal.json;

import dev.idem.core.fingerprint.MalformedJsonException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses I-JSON text into a tree of plain Java objects:
 * <ul>
 *   <li>object: {@code Map<String, Object>}, a mutable {@link LinkedHashMap} in document order;
 *   <li>array: {@code List<Object>}, a mutable {@link ArrayList};
 *   <li>string: {@link String};
 *   <li>number: {@link Double} (every JSON number is read as the nearest IEEE 754 double; {@code -0} stays
 *       {@code -0.0});
 *   <li>{@code true}/{@code false}: {@link Boolean};
 *   <li>{@code null}: {@link JsonNull#INSTANCE} (never Java {@code null}).
 * </ul>
 * Rejects what {@link MalformedJsonException} lists; nesting is limited to {@link JsonTape#DEFAULT_MAX_DEPTH} unless
 * another limit is given. {@link JsonWriter} writes such a tree back in canonical form. Thread-safe (stateless).
 */
public final class JsonParser {
  private JsonParser() {}

  /** Parses JSON text. Positions in errors refer to the text's UTF-8 encoding. */
  public static Object parse(String json) {
    return parse(Utf8.encode(json), JsonTape.DEFAULT_MAX_DEPTH);
  }

  /** Parses UTF-8 JSON. */
  public static Object parse(byte[] utf8) {
    return parse(utf8, JsonTape.DEFAULT_MAX_DEPTH);
  }

  /** Parses UTF-8 JSON with a nesting limit of {@code maxDepth} objects and arrays. */
  public static Object parse(byte[] utf8, int maxDepth) {
    try (JsonWorkspace w = JsonWorkspace.acquire()) {
      JsonTape tape = w.tape;
      tape.parse(utf8, maxDepth);
      return build(tape, tape.root());
    }
  }

  private static Object build(JsonTape tape, int t) {
    switch (tape.kind(t)) {
      case JsonTape.OBJECT: {
        int count = tape.a(t);
        Map<String, Object> map = new LinkedHashMap<>(Math.max(4, (int) (count / 0.75f) + 1));
        int child = t + 1;
        for (int i = 0; i < count; i++) {
          map.put(tape.string(child), build(tape, child + 1));
          child = tape.next(child + 1);
        }
        return map;
      }
      case JsonTape.ARRAY: {
        int count = tape.a(t);
        List<Object> list = new ArrayList<>(count);
        int child = t + 1;
        for (int i = 0; i < count; i++) {
          list.add(build(tape, child));
          child = tape.next(child);
        }
        return list;
      }
      case JsonTape.STRING:
        return tape.string(t);
      case JsonTape.NUMBER:
      case JsonTape.NUMBER_DOUBLE:
        return tape.numberValue(t);
      case JsonTape.TRUE:
        return Boolean.TRUE;
      case JsonTape.FALSE:
        return Boolean.FALSE;
      case JsonTape.NULL:
        return JsonNull.INSTANCE;
      default:
        throw new IllegalStateException("corrupt tape at token " + t);
    }
  }
}
