package dev.idem.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.test.DatabaseOutage;
import dev.idem.test.Eventually;
import dev.idem.test.TestPostgres;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pauses are timed on the monotonic ticker: a wall clock that steps a day forward (or back) on every read neither ends
 * a pause early nor stretches it, while moving the ticker ends it. Against the in-JVM broker and PostgreSQL.
 */
class KafkaPauseTickerTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration PAUSE = Duration.ofSeconds(30);
  /** Poll-loop turns (each reads the ticker while a partition is paused) that a pause must outlast. */
  private static final int TURNS = 15;

  private KafkaFixture f;
  private final KafkaFixture.Counts counts = new KafkaFixture.Counts();
  private final SteppingClock wall = new SteppingClock();
  private final FrozenTicker ticker = new FrozenTicker();

  @BeforeEach
  void setUp() {
    f = new KafkaFixture(1);
  }

  @AfterEach
  void tearDown() throws Exception {
    f.close();
  }

  @Test
  void aRetryPauseIgnoresWallClockStepsAndEndsWhenTheTickerMoves() throws Exception {
    List<String> ids = f.publish(1, 1);
    AtomicInteger calls = new AtomicInteger();
    AtomicLong readsAtFailure = new AtomicLong(-1);
    InboxHandler effect = f.recordEffect();

    try (KafkaInboxConsumer consumer = f.consumer(f.inbox(counts)).maxAttempts(5).failurePause(PAUSE)
        .listener(counts).clock(wall).ticker(ticker)
        .handler((tx, event) -> {
          if (calls.incrementAndGet() == 1) {
            readsAtFailure.set(ticker.reads.get());
            wall.step.set(Duration.ofDays(1).toMillis()); // from now on every read of the wall clock jumps a day ahead
            throw new IllegalStateException("flaky");
          }
          return effect.handle(tx, event);
        }).build().start()) {
      Eventually.await("the pause outlasting " + TURNS + " turns of the poll loop, or the record's second try", WAIT,
          () -> calls.get() >= 2 || readsAtFailure.get() >= 0 && ticker.reads.get() - readsAtFailure.get() > TURNS,
          done -> done);
      assertThat(calls.get()).as("handler calls while the ticker stood still and the wall clock ran ahead").isOne();

      wall.step.set(-Duration.ofDays(1).toMillis()); // the wall clock now steps back a day on every read
      ticker.advance(PAUSE);
      Eventually.await("the record processed after the pause", WAIT, this::committed, n -> n == 1);
    }

    assertThat(calls.get()).isEqualTo(2);
    assertThat(f.effectIds()).containsExactlyElementsOf(ids);
  }

  @Test
  void aDatabaseOutagePauseIgnoresWallClockStepsAndEndsWhenTheTickerMoves() throws Exception {
    List<String> ids = f.publish(1, 1);
    DatabaseOutage outage = DatabaseOutage.refusing(TestPostgres.postgres(), 1);
    Inbox unreliable = Inbox.builder(JdbcInboxStore.builder(outage.dataSource()).dialect(JdbcDialect.POSTGRESQL)
        .table(f.inboxTable).build()).listener(counts).build();
    AtomicInteger calls = new AtomicInteger();
    InboxHandler effect = f.recordEffect();

    try (KafkaInboxConsumer consumer = f.consumer(unreliable).maxAttempts(1).failurePause(PAUSE).listener(counts)
        .clock(wall).ticker(ticker)
        .handler((tx, event) -> {
          calls.incrementAndGet();
          return effect.handle(tx, event);
        }).build().start()) {
      Eventually.await("the refused connection", WAIT, outage::refused, n -> n == 1);
      long readsAtFailure = ticker.reads.get();
      wall.step.set(Duration.ofDays(1).toMillis());
      Eventually.await("the pause outlasting " + TURNS + " turns of the poll loop, or the handler's run", WAIT,
          () -> calls.get() >= 1 || ticker.reads.get() - readsAtFailure > TURNS, done -> done);
      assertThat(calls.get()).as("handler calls while the ticker stood still and the wall clock ran ahead").isZero();

      wall.step.set(-Duration.ofDays(1).toMillis());
      ticker.advance(PAUSE);
      Eventually.await("the record processed after the pause", WAIT, this::committed, n -> n == 1);
    }

    assertThat(calls.get()).isOne();
    assertThat(f.effectIds()).containsExactlyElementsOf(ids);
    assertThat(counts.deadLettered.get()).isZero();
  }

  private long committed() {
    try {
      return f.committedOffsets();
    } catch (Exception e) {
      return -1;
    }
  }

  /** Monotonic nanoseconds that move only when told to; counts its reads (one per poll-loop turn while paused). */
  private static final class FrozenTicker implements LongSupplier {
    final AtomicLong reads = new AtomicLong();
    private final AtomicLong nanos = new AtomicLong(-1_000_000_000_000L); // negative, as System.nanoTime may be

    @Override
    public long getAsLong() {
      reads.incrementAndGet();
      return nanos.get();
    }

    void advance(Duration d) {
      nanos.addAndGet(d.toNanos());
    }
  }

  /** A wall clock that moves by {@link #step} milliseconds on every read: a clock an NTP daemon keeps stepping. */
  private static final class SteppingClock extends Clock {
    final AtomicLong step = new AtomicLong();
    private final AtomicLong millis = new AtomicLong(Instant.parse("2026-01-01T00:00:00Z").toEpochMilli());

    @Override
    public long millis() {
      return millis.addAndGet(step.get());
    }

    @Override
    public Instant instant() {
      return Instant.ofEpochMilli(millis());
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      throw new UnsupportedOperationException();
    }
  }
}
