package dev.idem.outbox.consumer;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The dead-letter headers every broker writes: names, order, values, and the limits on the history. */
class DeadLetterHeadersTest {
  private static final Instant AT = Instant.parse("2026-01-02T03:04:05Z");

  @Test
  void aFailureLineIsTheTimeAndTheErrorCutAt500Characters() {
    assertThat(DeadLetterHeaders.attempt(AT, new IllegalStateException("line one\nline two")))
        .isEqualTo("2026-01-02T03:04:05Z IllegalStateException: line one line two");
    String line = DeadLetterHeaders.attempt(AT, new IllegalStateException("x".repeat(2_000)));
    assertThat(line).hasSize("2026-01-02T03:04:05Z ".length() + DeadLetterHeaders.MAX_ERROR_CHARS);
  }

  @Test
  void theHistoryKeepsTheLast20Lines() {
    List<String> history = List.of();
    for (int i = 1; i <= 25; i++) {
      history = DeadLetterHeaders.append(history, "line " + i);
    }
    assertThat(history).hasSize(DeadLetterHeaders.MAX_HISTORY).startsWith("line 6").endsWith("line 25");
  }

  @Test
  void theHeadersAreTheReasonConsumerOriginAttemptsAndOneLinePerFailureInOrder() {
    Decision gaveUp = new Decision(Action.DEAD_LETTER, Reason.HANDLER_FAILED, Duration.ZERO, 2);
    Map<String, String> origin = new LinkedHashMap<>();
    origin.put("queue", "orders");
    origin.put("exchange", null);
    Map<String, String> headers = DeadLetterHeaders.of(gaveUp, "billing", origin, List.of("first", "second"));

    assertThat(new ArrayList<>(headers.keySet())).containsExactly("idem-dlt-reason", "idem-dlt-consumer",
        "idem-dlt-queue", "idem-dlt-attempts", "idem-dlt-attempt-1", "idem-dlt-attempt-2");
    assertThat(headers).containsEntry("idem-dlt-reason", "handler_failed").containsEntry("idem-dlt-attempts", "2")
        .containsEntry("idem-dlt-attempt-1", "first").containsEntry("idem-dlt-attempt-2", "second");
    assertThat(DeadLetterHeaders.isOwn("idem-dlt-queue")).isTrue();
    assertThat(DeadLetterHeaders.isOwn("x-death")).isFalse();
  }

  @Test
  void aRefusalHasNoAttempts() {
    Decision refused = new Decision(Action.REJECT, Reason.MISSING_ID, Duration.ZERO, 0);
    assertThat(DeadLetterHeaders.of(refused, "billing", Map.of(), List.of()))
        .containsEntry("idem-dlt-reason", "missing_event_id").containsEntry("idem-dlt-attempts", "0")
        .doesNotContainKey("idem-dlt-attempt-1");
  }

  @Test
  void aSizeLimitLeavesOutTheOldestLinesAndKeepsTheRest() {
    Decision gaveUp = new Decision(Action.DEAD_LETTER, Reason.HANDLER_FAILED, Duration.ZERO, 3);
    List<String> history = List.of("a".repeat(100), "b".repeat(100), "c".repeat(100));
    Map<String, String> all = DeadLetterHeaders.of(gaveUp, "billing", Map.of(), history);
    int withoutHistory = 0;
    for (Map.Entry<String, String> e : DeadLetterHeaders.of(gaveUp, "billing", Map.of(), List.of()).entrySet()) {
      withoutHistory += e.getKey().length() + e.getValue().length();
    }

    Map<String, String> cut = DeadLetterHeaders.of(gaveUp, "billing", Map.of(), history, withoutHistory + 250);

    assertThat(all).containsKey("idem-dlt-attempt-3");
    assertThat(cut).containsEntry("idem-dlt-attempts", "3").containsEntry("idem-dlt-attempt-1", "b".repeat(100))
        .containsEntry("idem-dlt-attempt-2", "c".repeat(100)).doesNotContainKey("idem-dlt-attempt-3");
    assertThat(DeadLetterHeaders.of(gaveUp, "billing", Map.of(), history, 0)).containsKey("idem-dlt-reason")
        .doesNotContainKey("idem-dlt-attempt-1");
  }
}
