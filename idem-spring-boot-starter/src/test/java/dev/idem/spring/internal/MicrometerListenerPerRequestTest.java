package dev.idem.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Execution;
import dev.idem.core.RecordKey;
import dev.idem.core.StoredResponse;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The meters every request feeds (outcome, duration, store calls), kept once registered: same counts, same tags. */
class MicrometerListenerPerRequestTest {
  private static final RecordKey KEY = RecordKey.of("alice", "POST /payments", "k-1");

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final MicrometerListener listener = new MicrometerListener(registry, "payments");

  @Test
  void storeCallsOfOneTagSetFeedOneTimerAndANewTagSetGetsItsOwn() {
    listener.onStoreCall("jdbc", "find", 2_000_000, true);
    listener.onStoreCall("jdbc", "find", 4_000_000, true);
    listener.onStoreCall("jdbc", "find", 1_000_000, false);

    Timer ok = registry.get("idem.store.latency")
        .tags("instance", "payments", "store", "jdbc", "call", "find", "success", "true").timer();
    Timer failed = registry.get("idem.store.latency")
        .tags("instance", "payments", "store", "jdbc", "call", "find", "success", "false").timer();
    assertThat(ok.count()).isEqualTo(2);
    assertThat(ok.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(6.0);
    assertThat(failed.count()).isEqualTo(1);
    assertThat(registry.find("idem.store.latency").timers()).hasSize(2);
  }

  @Test
  void executionsAreCountedAndTimedByInstanceOperationAndOutcome() {
    StoredResponse created = StoredResponse.of(201, "{}");
    listener.onExecution("payments", Execution.stored(KEY, created), Duration.ofMillis(3));
    listener.onExecution("payments", Execution.stored(KEY, created), Duration.ofMillis(5));
    listener.onExecution("payments", Execution.replayed(KEY, created, Duration.ofSeconds(2)), Duration.ofMillis(1));
    listener.onExecution("refunds", Execution.stored(KEY, created), Duration.ofMillis(7));

    String stored = OutcomeNames.of(Execution.Outcome.STORED);
    String replayed = OutcomeNames.of(Execution.Outcome.REPLAYED);
    assertThat(registry.get("idem.requests")
        .tags("instance", "payments", "operation", "POST /payments", "outcome", stored).counter().count())
        .isEqualTo(2);
    assertThat(registry.get("idem.requests")
        .tags("instance", "payments", "operation", "POST /payments", "outcome", replayed).counter().count())
        .isEqualTo(1);
    assertThat(registry.get("idem.requests").tags("instance", "refunds", "outcome", stored).counter().count())
        .isEqualTo(1);
    Timer duration = registry.get("idem.request.duration")
        .tags("instance", "payments", "operation", "POST /payments", "outcome", stored).timer();
    assertThat(duration.count()).isEqualTo(2);
    assertThat(duration.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(8.0);
  }

  @Test
  void aMeterFilterOfTheRegistryStillAppliesToTheKeptMeters() {
    MeterRegistry filtered = new SimpleMeterRegistry();
    filtered.config().meterFilter(MeterFilter.ignoreTags("success"));
    MicrometerListener l = new MicrometerListener(filtered, "payments");

    l.onStoreCall("jdbc", "insert", 1_000_000, true);
    l.onStoreCall("jdbc", "insert", 1_000_000, true);

    Timer timer = filtered.get("idem.store.latency").tags("store", "jdbc", "call", "insert").timer();
    assertThat(timer.getId().getTag("success")).isNull();
    assertThat(timer.count()).isEqualTo(2);
  }
}
