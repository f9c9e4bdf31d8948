package dev.idem.spring.method;

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
 * ordinary values does not change.
 */
final class ExactNumbers {
  /** 2^53: every integer up to it in magnitude is a double. */
  private static final BigInteger LARGEST_EXACT = BigInteger.ONE.shiftLeft(53);

  private ExactNumbers() {}

  /** {@code json} (as the mapper wrote it) with each number a double would change written as a string. */
  static byte[] of(ObjectMapper mapper, byte[] json) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(json.length + 16);
    try (JsonParser p = mapper.createParser(json); JsonGenerator g = mapper.createGenerator(out)) {
      for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
        if (t == JsonToken.VALUE_NUMBER_INT) {
          BigInteger v = p.getBigIntegerValue();
          if (v.abs().compareTo(LARGEST_EXACT) > 0) {
            g.writeString(v.toString());
          } else {
            g.writeNumber(p.getString());
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

  /** Whether {@code v} is the shortest decimal of the double nearest to it, so that a double keeps it as it is. */
  static boolean survivesDouble(BigDecimal v) {
    double d = v.doubleValue();
    return Double.isFinite(d) && new BigDecimal(Double.toString(d)).compareTo(v) == 0;
  }
}
