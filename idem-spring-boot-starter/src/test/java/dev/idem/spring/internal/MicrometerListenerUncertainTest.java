package dev.idem.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.AuditEntry;
import dev.idem.core.Checkpoint;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.OperationPolicy;
import dev.idem.core.Reconciler;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.servlet.IdempotentRoute;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The meters of uncertain records: how many became uncertain, reconcilers' answers, operators' resolutions. */
class MicrometerListenerUncertainTest {
  private static final Instant NOW = Instant.parse("2030-01-01T12:00:00Z");
  private static final RecordKey KEY = RecordKey.of("alice", "POST /payments", "k-1");

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final MicrometerListener listener = new MicrometerListener(registry, "payments");

  private double count(String name, String... tags) {
    return registry.get(name).tags(tags).counter().count();
  }

  @Test
  void aPhasedOperationStartsWithNoUncertainRecordAndCountsEachOne() {
    listener.registerOperation("payments", "POST /payments", IdempotentRoute.Mode.PHASED);
    double before = count("idem.records.uncertain", "instance", "payments", "operation", "POST /payments");
    IdempotencyRecord uncertain = IdempotencyRecord.claimed(KEY, Fingerprint.ofHash("0".repeat(64)), "w", NOW,
        Duration.ofSeconds(30), Duration.ofHours(1))
        .withRecoveryPoint("create", Checkpoint.empty(), NOW, NOW)
        .afterFailedResume(OperationPolicy.builder().resumeCap(1, Duration.ofHours(1)).build(), Duration.ZERO, NOW);

    listener.onUncertain("payments", uncertain, new IllegalStateException("provider down"));

    assertThat(uncertain.state()).isEqualTo(RecordState.UNCERTAIN);
    assertThat(before).isZero();
    assertThat(count("idem.records.uncertain", "instance", "payments", "operation", "POST /payments")).isEqualTo(1);
  }

  @Test
  void reconcilersAnswersAreCountedByResult() {
    listener.onReconciled("payments", KEY, Reconciler.Verdict.Result.COMPLETED, true, null);
    listener.onReconciled("payments", KEY, Reconciler.Verdict.Result.COMPLETED, false, null);
    listener.onReconciled("payments", KEY, Reconciler.Verdict.Result.RESUME, true, null);
    listener.onReconciled("payments", KEY, Reconciler.Verdict.Result.UNKNOWN, false, null);
    listener.onReconciled("payments", KEY, Reconciler.Verdict.Result.UNKNOWN, false, new IllegalStateException());

    for (String result : new String[] {"completed", "skipped", "resumed", "unknown", "error"}) {
      assertThat(count("idem.reconcile", "instance", "payments", "operation", "POST /payments", "result", result))
          .as(result).isEqualTo(1);
    }
  }

  @Test
  void operatorsResolutionsAreCountedByAction() {
    listener.onResolved("payments", new AuditEntry(KEY, 3, NOW, "alice", Resolution.Action.FAIL,
        RecordState.UNCERTAIN, RecordState.FAILED, "no charge at the provider"));

    assertThat(count("idem.resolutions", "instance", "payments", "operation", "POST /payments", "action", "fail"))
        .isEqualTo(1);
  }
}
