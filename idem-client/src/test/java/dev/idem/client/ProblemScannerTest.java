package dev.idem.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.client.internal.ProblemScanner;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProblemScannerTest {
  private static Map<String, Object> scan(String json) {
    return ProblemScanner.scan(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void readsTopLevelStringsAndBooleansAndSkipsTheRest() {
    Map<String, Object> members = scan("{ \"status\": 409,"
        + " \"nested\": {\"code\": \"inner\", \"a\": [1, {\"b\": \"]\"}]},"
        + " \"code\" : \"CONFLICT.idempotency.in_progress\", \"retryable\": true, \"x\": null,"
        + " \"detail\": \"q\\\"uote \\u00e9\" }");

    assertThat(members).containsEntry("code", "CONFLICT.idempotency.in_progress")
        .containsEntry("retryable", true)
        .containsEntry("detail", "q\"uote \u00e9")
        .doesNotContainKeys("status", "nested", "x");
  }

  @Test
  void malformedInputKeepsWhatWasRead() {
    assertThat(scan("{\"code\":\"A\",\"retryable\":fals")).containsEntry("code", "A").doesNotContainKey("retryable");
    assertThat(scan("not json")).isEmpty();
    assertThat(scan("")).isEmpty();
    assertThat(scan("[\"code\"]")).isEmpty();
  }

  @Test
  void readsOnlyTheFirstBytesOfAHugeBody() {
    String huge = "{\"pad\":\"" + "x".repeat(ProblemScanner.MAX_BYTES) + "\",\"code\":\"LATE\"}";

    assertThat(scan(huge)).doesNotContainKey("code");
  }
}
