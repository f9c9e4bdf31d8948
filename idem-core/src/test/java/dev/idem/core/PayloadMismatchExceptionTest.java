package dev.idem.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A mismatch's message names the differing fields, which a client chose, without letting them forge a log line. */
class PayloadMismatchExceptionTest {

  @Test
  void theFieldNamesInTheMessageAreEscaped() {
    PayloadMismatchException e = new PayloadMismatchException(RecordKey.of("alice", "POST /payments", "k-1"),
        List.of("amount", "x\r\n2026-01-01 INFO forged", "\u001b[31mred", "caf\u00e9\\"));

    assertThat(e.getMessage()).contains("fields that differ: [amount, x\\r\\n2026-01-01 INFO forged, \\u001b[31mred,"
        + " caf\\u00e9\\\\]").doesNotContain("\n", "\r", "\u001b");
    assertThat(e.differingFields()).as("the names themselves, unchanged").contains("x\r\n2026-01-01 INFO forged");
  }
}
