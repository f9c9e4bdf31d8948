package dev.idem.spring.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.consumer.Action;
import dev.idem.outbox.consumer.Decision;
import dev.idem.outbox.consumer.Reason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Each report of a consumer lands on its counter, tagged with the instance and the consumer and nothing unbounded. */
class ConsumerMetricsTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final ConsumerMetrics metrics = new ConsumerMetrics(registry, "shop");
  private final RuntimeException error = new RuntimeException("boom");

  private double count(String name, String... tags) {
    Counter c = registry.find(name).tags("instance", "shop", "consumer", "orders").tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void everyReportIsCounted() {
    metrics.processed("orders", "rabbitmq:orders", "m-1");
    metrics.processed("orders", "rabbitmq:orders", "m-2");
    metrics.duplicate("orders", "rabbitmq:orders", "m-1");
    metrics.retried("orders", "rabbitmq:orders", "m-3",
        new Decision(Action.RETRY, Reason.HANDLER_FAILED, Duration.ofMillis(100), 1), error);
    metrics.retried("orders", "rabbitmq:orders", "m-4",
        new Decision(Action.RETRY, Reason.CONTENTION, Duration.ofMillis(100), 0), error);
    metrics.paused("orders", "rabbitmq:orders", "m-5",
        new Decision(Action.PAUSE, Reason.DATABASE_DOWN, Duration.ofSeconds(1), 0), error);
    metrics.rejected("orders", "rabbitmq:orders", null, Reason.MISSING_ID, "no message-id");
    metrics.deadLettered("orders", "rabbitmq:orders", "m-3",
        new Decision(Action.DEAD_LETTER, Reason.HANDLER_FAILED, Duration.ZERO, 5), error);
    metrics.deadLetterFailed("orders", "orders-0", "m-6", error);
    metrics.answerFailed("orders", "rabbitmq:orders", "m-7", error);
    metrics.receiveFailed("orders", "orders-0", error);
    metrics.stopped("orders", new OutOfMemoryError("test"));

    assertThat(count("idem.consumer.processed")).isEqualTo(2);
    assertThat(count("idem.consumer.duplicates")).isEqualTo(1);
    assertThat(count("idem.consumer.failures", "reason", "handler_failed")).isEqualTo(1);
    assertThat(count("idem.consumer.failures", "reason", "contention")).isEqualTo(1);
    assertThat(count("idem.consumer.paused")).isEqualTo(1);
    assertThat(count("idem.consumer.rejected", "reason", "missing_event_id")).isEqualTo(1);
    assertThat(count("idem.consumer.dead.lettered", "reason", "handler_failed")).isEqualTo(1);
    for (String kind : List.of("dead_letter", "answer", "receive", "stopped")) {
      assertThat(count("idem.consumer.errors", "kind", kind)).as(kind).isEqualTo(1);
    }
    for (Meter meter : registry.getMeters()) {
      assertThat(meter.getId().getTags()).extracting(t -> t.getKey())
          .isSubsetOf("instance", "consumer", "reason", "kind");
    }
  }
}
