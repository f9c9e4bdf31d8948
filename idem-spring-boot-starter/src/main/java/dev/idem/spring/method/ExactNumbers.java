package dev.idem.spring.method;

import dev.idem.core.fingerprint.JsonCanonicalizer;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.JsonParser;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.ObjectMapper;

/**
 * A method's fingerprint JSON with its numbers kept exact. The fingerprint canonicalises JSON numbers as IEEE doubles
 * (RFC 8785), so two arguments that differ beyond a double's precision (longs past 2^53, decimals with more
 * significant digits than a double holds) would fingerprint alike and a changed call would replay. Such a number is
 * written as a JSON string of its text instead; every other number is written as it was, so the fingerprint of
 * ordinary values does not change. An integer stays a number when it is a double exactly (2^60 does, 2^60 + 1 does
 * not); a decimal when it is how its double is written (0.1 is, 0.1000000000000000000001 is not).
 */
final class ExactNumbers {
  /** 2^53: every integer up to it in magnitude is a double. */
  private static final BigInteger EVERY_ONE_EXACT = BigInteger.ONE.shiftLeft(53);

  private ExactNumbers() {}

  /** {@code json} (as the mapper wrote it) with each number a double would change written as a string. */
  static byte[] of(ObjectMapper mapper, byte[] json) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(json.length + 16);
    try (JsonParser p = mapper.createParser(json); JsonGenerator g = mapper.createGenerator(out)) {
      for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
        if (t == JsonToken.VALUE_NUMBER_INT) {
          BigInteger v = p.getBigIntegerValue();
          if (v.abs().compareTo(EVERY_ONE_EXACT) <= 0 || isDouble(v)) {
            g.writeNumber(p.getString());
          } else {
            g.writeString(v.toString());
          }
        } else if (t == JsonToken.VALUE_NUMBER_FLOAT) {
          String text = p.getString();
          if (survivesDouble(new BigDecimal(text))) {
            g.writeNumber(text);
          } else {
            g.writeString(text);
          }
        } else {
          g.copyCurrentEvent(p);
        }
      }
    }
    return out.toByteArray();
  }

  /** Whether {@code v} is a double exactly. */
  static boolean isDouble(BigInteger v) {
    double d = v.doubleValue();
    return Double.isFinite(d) && new BigDecimal(d).compareTo(new BigDecimal(v)) == 0;
  }

  /**
   * Whether {@code v} is the decimal a double is written as: its canonical form (RFC 8785: ECMAScript's shortest
   * digits, the same on every JDK), or the JDK's {@link Double#toString}, which is how the mapper writes a double
   * argument (on JDK 17 it is not always the shortest). Any other decimal shares its double with one of those.
   */
  static boolean survivesDouble(BigDecimal v) {
    double d = v.doubleValue();
    return Double.isFinite(d) && (new BigDecimal(JsonCanonicalizer.canonicalize(v.toString())).compareTo(v) == 0
        || new BigDecimal(Double.toString(d)).compareTo(v) == 0);
  }
}
