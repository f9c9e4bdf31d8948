package dev.idem.spring.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.jdbc.InProgressRecords;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.test.MutableClock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;

/**
 * {@link InProgressGauges}: the figures of a real store, read at most once per refresh interval whatever the scrape
 * rate, and kept when a read fails. Reads run on the scraping thread here (a direct executor) and the interval is
 * measured on a fake monotonic time, so nothing waits.
 */
class InProgressGaugesTest {
  private static final Instant START = Instant.parse("2030-01-01T12:00:00Z");

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final MutableClock clock = new MutableClock(START);
  private final AtomicLong nanos = new AtomicLong();

  private double inProgress() {
    return registry.get(InProgressGauges.IN_PROGRESS).tag("instance", "payments").gauge().value();
  }

  private double leaseExpired() {
    return registry.get(InProgressGauges.LEASE_EXPIRED).tag("instance", "payments").gauge().value();
  }

  private double oldestAgeSeconds() {
    return registry.get(InProgressGauges.OLDEST_AGE).tag("instance", "payments").timeGauge().value(TimeUnit.SECONDS);
  }

  @Test
  void theGaugesShowTheStoresInProgressRecordsAndTheOldestAgeGrowsWithTheClock() throws Exception {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:gauges-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(h2).name("gauges").createSchemaIfMissing(true).build();
    Fingerprint fingerprint = Fingerprint.ofHash("0".repeat(64));
    store.inTransaction(tx -> {
      store.insert(tx, IdempotencyRecord.claimed(RecordKey.of("alice", "POST /payments", "old"), fingerprint, "w1",
          START.minus(Duration.ofMinutes(5)), Duration.ofSeconds(30), Duration.ofDays(1)));
      store.insert(tx, IdempotencyRecord.claimed(RecordKey.of("bob", "POST /payments", "new"), fingerprint, "w2",
          START.minus(Duration.ofSeconds(10)), Duration.ofSeconds(30), Duration.ofDays(1)));
      return null;
    });
    InProgressGauges gauges = new InProgressGauges(registry, "payments", store::inProgress, clock,
        Duration.ofSeconds(10), Runnable::run, nanos::get);

    double count = inProgress();
    double expired = leaseExpired();
    double age = oldestAgeSeconds();
    clock.advance(Duration.ofSeconds(3));
    double ageLater = oldestAgeSeconds();

    assertThat(count).isEqualTo(2);
    assertThat(expired).as("the older record's lease ended 4.5 minutes ago").isEqualTo(1);
    assertThat(age).isEqualTo(300);
    assertThat(ageLater).as("between reads the age follows the clock").isEqualTo(303);
    assertThat(gauges.reads()).isEqualTo(1);
  }

  @Test
  void theUncertainGaugeShowsTheStoresUncertainRecords() {
    new InProgressGauges(registry, "payments", now -> new InProgressRecords(1, 0, START, START.plusSeconds(5), 4),
        clock, Duration.ofSeconds(10), Runnable::run, nanos::get);

    double uncertain = registry.get(InProgressGauges.UNCERTAIN).tag("instance", "payments").gauge().value();

    assertThat(uncertain).isEqualTo(4);
    assertThat(inProgress()).isEqualTo(1);
  }

  @Test
  void aBurstOfScrapesReadsOnceAndTheNextIntervalReadsAgain() {
    List<Instant> asked = new ArrayList<>();
    AtomicReference<InProgressRecords> figures = new AtomicReference<>(
        new InProgressRecords(3, 0, START.minus(Duration.ofMinutes(1)), START.plusSeconds(20)));
    InProgressGauges gauges = new InProgressGauges(registry, "payments", now -> {
      asked.add(now);
      return figures.get();
    }, clock, Duration.ofSeconds(10), Runnable::run, nanos::get);

    for (int i = 0; i < 50; i++) {
      inProgress();
      leaseExpired();
      oldestAgeSeconds();
    }
    figures.set(InProgressRecords.NONE);
    nanos.addAndGet(Duration.ofSeconds(9).toNanos());
    double beforeTheInterval = inProgress();
    nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    inProgress();
    double afterTheInterval = inProgress();

    assertThat(gauges.reads()).isEqualTo(2);
    assertThat(asked).containsExactly(START, START);
    assertThat(beforeTheInterval).isEqualTo(3);
    assertThat(afterTheInterval).isZero();
    assertThat(oldestAgeSeconds()).as("no record in progress").isZero();
  }

  @Test
  void closingRemovesTheGaugesAndLeavesACallersExecutorRunning() {
    ExecutorService callers = Executors.newSingleThreadExecutor();
    try {
      InProgressGauges gauges = new InProgressGauges(registry, "payments", now -> InProgressRecords.NONE, clock,
          Duration.ofSeconds(10), callers, nanos::get);

      gauges.close();

      assertThat(registry.find(InProgressGauges.IN_PROGRESS).gauge()).isNull();
      assertThat(registry.find(InProgressGauges.OLDEST_AGE).timeGauge()).isNull();
      assertThat(callers.isShutdown()).isFalse();
    } finally {
      callers.shutdownNow();
    }
  }

  @Test
  void theGaugesAreNanUntilAReadSucceedsAndKeepTheirLastFiguresWhenTheDatabaseFails() {
    AtomicReference<RuntimeException> failure = new AtomicReference<>(new IllegalStateException("database away"));
    InProgressGauges gauges = new InProgressGauges(registry, "payments", now -> {
      RuntimeException f = failure.get();
      if (f != null) {
        throw f;
      }
      return new InProgressRecords(1, 1, START.minusSeconds(60), START.minusSeconds(30));
    }, clock, Duration.ofSeconds(10), Runnable::run, nanos::get);

    double beforeAnyRead = inProgress();
    failure.set(null);
    nanos.addAndGet(Duration.ofSeconds(10).toNanos());
    double afterARead = inProgress();
    failure.set(new IllegalStateException("database away again"));
    nanos.addAndGet(Duration.ofSeconds(10).toNanos());
    double whileFailing = inProgress();

    assertThat(beforeAnyRead).isNaN();
    assertThat(afterARead).isEqualTo(1);
    assertThat(whileFailing).isEqualTo(1);
    assertThat(gauges.reads()).isEqualTo(3);
  }
}
