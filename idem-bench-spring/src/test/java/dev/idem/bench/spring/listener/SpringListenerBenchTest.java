package dev.idem.bench.spring.listener;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.bench.outbox.InboxTables;
import dev.idem.bench.spring.listener.SpringListenerBench.Broker;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The listener benchmark measures what it claims: on the real brokers and PostgreSQL, each variant's listener applies
 * one effect per message and consumes them all, and only the {@code idem} variant writes inbox rows (one per
 * message); between runs the tables go back to their pre-filled rows.
 */
class SpringListenerBenchTest {
  private static final int MESSAGES = 120;
  private static final int PREFILL = 300;

  @ParameterizedTest
  @ValueSource(strings = {"rabbit", "kafka"})
  void eachVariantAppliesOneEffectPerMessage(String name) throws Exception {
    Map<String, String> flags = Map.of("events", "" + MESSAGES, "prefill", "" + PREFILL);
    try (Broker broker = Broker.open(name, flags)) {
      InboxTables tables = broker.comparison().tables();
      SpringListenerBench.withApplication(broker, Duration.ofMinutes(2), bench -> {
        for (String variant : List.of("baseline", "idem", "idem", "baseline")) {
          bench.prepare(variant, "per-record");
          bench.consume(variant, "per-record"); // fails unless the broker holds none of the messages afterwards
          assertThat(tables.effectRows()).as(name + " " + variant + ": effects").isEqualTo(PREFILL + MESSAGES);
          assertThat(tables.inboxRows()).as(name + " " + variant + ": inbox rows")
              .isEqualTo(PREFILL + (variant.equals("idem") ? MESSAGES : 0));
        }
        return null;
      });
    }
  }
}
