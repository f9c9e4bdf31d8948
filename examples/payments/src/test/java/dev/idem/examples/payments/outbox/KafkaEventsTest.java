package dev.idem.examples.payments.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The {@code tenant} header of Kafka records: the name itself where a header can carry it, else percent-encoded. */
class KafkaEventsTest {
  @Test
  void aTenantNameOfVisibleAsciiIsTheHeaderAsItIs() {
    assertThat(KafkaEvents.headerValue("alice")).isEqualTo("alice");
    assertThat(KafkaEvents.headerValue("Acme Corp. (EU)")).isEqualTo("Acme Corp. (EU)");
  }

  @Test
  void percentAndCharactersBeyondVisibleAsciiArePercentEncodedUtf8() {
    assertThat(KafkaEvents.headerValue("100%")).isEqualTo("100%25");
    assertThat(KafkaEvents.headerValue("Zoë")).isEqualTo("Zo%C3%AB");
    assertThat(KafkaEvents.headerValue("a\tb")).isEqualTo("a%09b");
  }
}
