package dev.idem.core.fingerprint;

import dev.idem.core.internal.json.JsonProjection;
import dev.idem.core.internal.json.JsonTape;
import dev.idem.core.internal.json.JsonWorkspace;
import dev.idem.core.internal.json.Utf8;
import java.nio.charset.StandardCharsets;

/**
 * The JSON Canonicalization Scheme (RFC 8785): the one byte sequence that every equivalent JSON text maps to. Members
 * are sorted by their names' UTF-16 code units, whitespace is removed, numbers are written as ECMAScript writes a
 * double (shortest round-trip digits, {@code 1e+21}, {@code 1e-7}, {@code -0} as {@code 0}), and strings use only
 * the escapes {@code \" \\ \b \f \n \r \t} and <code>&#92;u00xx</code> for other control characters, everything else as
 * UTF-8.
 *
 * <p>Input must be I-JSON (RFC 7493): see {@link MalformedJsonException} for what is rejected. Nesting is limited to
 * {@value JsonTape#DEFAULT_MAX_DEPTH} levels. Thread-safe (stateless).
 */
public final class JsonCanonicalizer {
  private JsonCanonicalizer() {}

  /**
   * The canonical form of JSON text.
   *
   * @throws MalformedJsonException when {@code json} is not valid I-JSON (positions refer to its UTF-8 encoding)
   */
  public static String canonicalize(String json) {
    return new String(canonicalize(Utf8.encode(json)), StandardCharsets.UTF_8);
  }

  /**
   * The canonical form of UTF-8 JSON, as UTF-8.
   *
   * @throws MalformedJsonException when {@code utf8Json} is not valid I-JSON
   */
  public static byte[] canonicalize(byte[] utf8Json) {
    try (JsonWorkspace w = JsonWorkspace.acquire()) {
      w.tape.parse(utf8Json, JsonTape.DEFAULT_MAX_DEPTH);
      w.writer.write(w.tape, JsonProjection.none(), w.sink);
      return w.sink.toByteArray();
    }
  }
}
