package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.fingerprint.Fingerprinter;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.ObjectMapper;

/** The method fingerprint's JSON: numbers a double would change become strings, every other value stays. */
class ExactNumbersTest {
  private final ObjectMapper mapper = new ObjectMapper();

  private String exact(Object value) {
    return new String(ExactNumbers.of(mapper, mapper.writeValueAsBytes(value)), StandardCharsets.UTF_8);
  }

  private static String hash(String json) {
    return Fingerprinter.ofDefaults().fingerprint("op", json.getBytes(StandardCharsets.UTF_8), "application/json")
        .hash();
  }

  private static Map<String, Object> args(Object amount) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("key", "k");
    m.put("amount", amount);
    return m;
  }

  @Test
  void numbersPastADoublesPrecisionAreWrittenAsTheirText() {
    assertThat(exact(args(9007199254740993L))).isEqualTo("{\"key\":\"k\",\"amount\":\"9007199254740993\"}");
    assertThat(exact(-9007199254740993L)).isEqualTo("\"-9007199254740993\"");
    assertThat(exact(new BigInteger("123456789012345678901234567890")))
        .isEqualTo("\"123456789012345678901234567890\"");
    assertThat(exact(new BigDecimal("0.12345678901234567891"))).isEqualTo("\"0.12345678901234567891\"");
    assertThat(exact(new BigDecimal("1E+400"))).as("past a double's range").isEqualTo("\"1E+400\"");
    assertThat(exact(1152921504606846977L)).as("2^60 + 1").isEqualTo("\"1152921504606846977\"");
    assertThat(hash(exact(args(9007199254740993L)))).isNotEqualTo(hash(exact(args(9007199254740992L))));
    assertThat(hash(exact(args(1152921504606846977L)))).isNotEqualTo(hash(exact(args(1L << 60))));
    assertThat(hash(exact(args(new BigDecimal("0.12345678901234567891")))))
        .isNotEqualTo(hash(exact(args(new BigDecimal("0.12345678901234567892")))));
  }

  @Test
  void ordinaryValuesFingerprintAsTheJsonTheMapperWrote() {
    for (Object amount : List.of(0, 12, -7L, 9007199254740992L, -9007199254740992L, 1L << 60, Long.MIN_VALUE,
        19.99, 0.1f, -0.0, 2.82879384806159E17,
        new BigDecimal("19.99"), new BigDecimal("1E+20"), BigInteger.TEN, Double.MAX_VALUE, 1e-300)) {
      Map<String, Object> arguments = args(amount);
      arguments.put("lines", List.of(Map.of("sku", "a/b \u00e9", "n", 3), true));
      arguments.put("none", null);
      String old = new String(mapper.writeValueAsBytes(arguments), StandardCharsets.UTF_8);

      assertThat(exact(arguments)).as("%s", amount).isEqualTo(old);
      assertThat(hash(exact(arguments))).isEqualTo(hash(old));
    }
  }
}
