package dev.idem.servlet.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The code the filter announces for a kept or replayed problem. */
class StoredProblemsTest {
  private static final Map<String, List<String>> PROBLEM = Map.of("Content-Type",
      List.of("application/problem+json"));

  private static String code(String document) {
    return StoredProblems.code(PROBLEM, document.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theCodeComesFromTheCodeMemberOrIdemsProblemType() {
    assertThat(code("{\"type\":\"urn:idem:problem:CONFLICT.idempotency.in_progress\",\"title\":\"t\""))
        .as("Idem's type comes first, before the detail").isEqualTo("CONFLICT.idempotency.in_progress");
    assertThat(code("{\"type\":\"about:blank\",\"code\":\"PAYMENT.declined\",\"status\":402}"))
        .isEqualTo("PAYMENT.declined");
    assertThat(code("{\"type\":\"about:blank\",\"title\":\"Bad\"}")).isNull();
    assertThat(code("{\"code\":\"not a code\"}")).isNull();
    assertThat(code("{\"code\":\"" + "A".repeat(150) + "\"}")).isNull();
    assertThat(code("{\"code\":\"VALIDATION.amou")).isNull();
  }

  @Test
  void onlyProblemDocuments() {
    byte[] body = "{\"code\":\"APP.x\"}".getBytes(StandardCharsets.UTF_8);
    assertThat(StoredProblems.code(Map.of("content-type", List.of("application/json")), body)).isNull();
    assertThat(StoredProblems.code(Map.of(), body)).isNull();
    assertThat(StoredProblems.code(PROBLEM, new byte[0])).isNull();
  }
}
