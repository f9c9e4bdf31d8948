package dev.idem.outbox.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.StoreException;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.core.spi.TransactionWork;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxPayloadMismatchException;
import dev.idem.outbox.InboxResult;
import dev.idem.outbox.memory.InMemoryInboxStore;
import dev.idem.outbox.spi.InboxAdmin;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.outbox.spi.InboxStore.Fault;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one decision rule of every inbox consumer, without a broker or a database. */
class ConsumerEngineTest {
  /** A store that judges only its own exceptions (the SPI's default). */
  private static final InboxStore STORE = new InMemoryInboxStore();

  private final ConsumerEngine engine = ConsumerEngine.builder().maxAttempts(3)
      .backoff(Duration.ofMillis(100), Duration.ofSeconds(1)).build();

  private static StoreException store(String state, boolean lockTimeout, boolean transientFailure) {
    SQLException cause = new SQLException("from the driver", state);
    return new StoreException("inbox", "committing event e-1 for billing failed", state, lockTimeout,
        transientFailure, cause);
  }

  /** A store that judges every failure {@code fault}. */
  static InboxStore judging(Fault fault) {
    InboxStore memory = new InMemoryInboxStore();
    return new InboxStore() {
      @Override
      public String name() {
        return "judging " + fault;
      }

      @Override
      public <R> R inTransaction(TransactionWork<R> work) throws Exception {
        return memory.inTransaction(work);
      }

      @Override
      public List<Recorded> record(StoreTransaction tx, String consumer, List<Entry> events, Instant now) {
        return memory.record(tx, consumer, events, now);
      }

      @Override
      public void keep(StoreTransaction tx, String consumer, List<String> eventIds, List<String> results) {
        memory.keep(tx, consumer, eventIds, results);
      }

      @Override
      public Fault fault(Throwable error) {
        return fault;
      }

      @Override
      public InboxAdmin admin() {
        return memory.admin();
      }
    };
  }

  private static InboxHandlerException handler(Throwable cause) {
    return new InboxHandlerException("billing", "e-1", cause);
  }

  @Test
  void aProcessedOrDuplicateMessageIsAcknowledged() {
    Decision processed = engine.processed(new InboxResult(false, "ok", Instant.EPOCH));
    Decision duplicate = engine.processed(new InboxResult(true, "ok", Instant.EPOCH));

    assertThat(processed).isEqualTo(new Decision(Action.ACK, Reason.PROCESSED, Duration.ZERO, 0));
    assertThat(duplicate).isEqualTo(new Decision(Action.ACK, Reason.DUPLICATE, Duration.ZERO, 0));
    assertThat(processed.counted()).isFalse();
    assertThat(processed.triesAgain()).isFalse();
  }

  @Test
  void aMessageWithoutAUsableIdOrTooLargeIsRejectedAndNeverCounted() {
    for (Reason reason : new Reason[] {Reason.MISSING_ID, Reason.INVALID_ID, Reason.TOO_LARGE}) {
      Decision d = engine.refused(reason);
      assertThat(d.action()).isEqualTo(Action.REJECT);
      assertThat(d.reason()).isEqualTo(reason);
      assertThat(d.attempts()).isZero();
      assertThat(d.counted()).isFalse();
      assertThat(engine.decide(reason, new History(2, 0, 0))).isEqualTo(d);
    }
    assertThat(engine.failed(new IllegalArgumentException("eventId too long"), History.NONE, STORE))
        .isEqualTo(engine.refused(Reason.INVALID_ID));
    assertThatThrownBy(() -> engine.refused(Reason.HANDLER_FAILED)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> engine.decide(Reason.PROCESSED, History.NONE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("processed(result)");
  }

  @Test
  void aPayloadMismatchIsDeadLetteredAtOnceAndCounted() {
    Decision d = engine.failed(new InboxPayloadMismatchException("billing", "e-1"), History.NONE, STORE);

    assertThat(d).isEqualTo(new Decision(Action.DEAD_LETTER, Reason.PAYLOAD_MISMATCH, Duration.ZERO, 1));
    assertThat(d.counted()).isTrue();
  }

  @Test
  void aFailingHandlerIsRetriedWithAGrowingBackoffThenDeadLetteredOnTheLastAttempt() {
    Throwable e = handler(new IllegalStateException("boom"));
    Decision first = engine.failed(e, History.NONE, STORE);
    Decision second = engine.failed(e, History.NONE.next(first), STORE);
    Decision third = engine.failed(e, History.NONE.next(first).next(second), STORE);

    assertThat(first).isEqualTo(new Decision(Action.RETRY, Reason.HANDLER_FAILED, Duration.ofMillis(100), 1));
    assertThat(second).isEqualTo(new Decision(Action.RETRY, Reason.HANDLER_FAILED, Duration.ofMillis(200), 2));
    assertThat(third).isEqualTo(new Decision(Action.DEAD_LETTER, Reason.HANDLER_FAILED, Duration.ZERO, 3));
    assertThat(first.counted()).isTrue();
    assertThat(engine.failed(new AssertionError("an Error"), History.of(7), STORE).action())
        .isEqualTo(Action.DEAD_LETTER);
  }

  @Test
  void withUnlimitedAttemptsAFailingHandlerIsNeverGivenUp() {
    ConsumerEngine forever = ConsumerEngine.builder().maxAttempts(ConsumerEngine.UNLIMITED).build();

    Decision d = forever.decide(Reason.HANDLER_FAILED, History.of(Integer.MAX_VALUE));

    assertThat(d.action()).isEqualTo(Action.RETRY);
    assertThat(d.attempts()).isEqualTo(Integer.MAX_VALUE);
    assertThat(d.after()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void aDatabaseOutagePausesCountsAgainstNoMessageAndNeverGivesUpEvenOnTheLastAttempt() {
    StoreException refused = store("08001", false, true);
    History lastAttempt = History.of(2); // the next counted failure would dead-letter the message

    Decision first = engine.failed(refused, lastAttempt, STORE);
    History after = lastAttempt.next(first);
    Decision second = engine.failed(refused, after, STORE);

    assertThat(first).isEqualTo(new Decision(Action.PAUSE, Reason.DATABASE_DOWN, Duration.ofMillis(100), 2));
    assertThat(first.counted()).isFalse();
    assertThat(first.triesAgain()).isTrue();
    assertThat(after).isEqualTo(new History(2, 0, 1));
    assertThat(second.after()).isEqualTo(Duration.ofMillis(200));
    assertThat(engine.decide(Reason.DATABASE_DOWN, new History(2, 0, 40)).after()).isEqualTo(Duration.ofSeconds(1));
    assertThat(engine.failed(handler(new IllegalStateException()), after, STORE).action())
        .isEqualTo(Action.DEAD_LETTER);
  }

  @Test
  void passingConflictsAreRetriedWithoutCountingThenCountAsTheMessagesFailures() {
    ConsumerEngine twice = ConsumerEngine.builder().maxAttempts(2).maxUncountedContention(2).build();
    Throwable deadlock = handler(new SQLTransactionRollbackException("deadlock detected", "40P01"));
    InboxStore conflicts = judging(Fault.CONTENTION);

    Decision first = twice.failed(deadlock, History.NONE, conflicts);
    Decision second = twice.failed(deadlock, History.NONE.next(first), conflicts);
    History h = History.NONE.next(first).next(second);
    Decision third = twice.failed(deadlock, h, conflicts);
    Decision fourth = twice.failed(deadlock, h.next(third), conflicts);

    assertThat(first).isEqualTo(new Decision(Action.RETRY, Reason.CONTENTION, Duration.ofMillis(100), 0));
    assertThat(first.counted()).isFalse();
    assertThat(second.after()).isEqualTo(Duration.ofMillis(200));
    assertThat(h).isEqualTo(new History(0, 2, 0));
    assertThat(third).isEqualTo(new Decision(Action.RETRY, Reason.HANDLER_FAILED, Duration.ofMillis(100), 1));
    assertThat(fourth).isEqualTo(new Decision(Action.DEAD_LETTER, Reason.HANDLER_FAILED, Duration.ZERO, 2));
  }

  @Test
  void theStoreJudgesWhoseFailureItIsAndTheEngineMapsItsJudgement() {
    Throwable e = handler(new IllegalStateException("judged by the store"));

    assertThat(ConsumerEngine.classify(e, judging(Fault.OUTAGE))).isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(e, judging(Fault.CONTENTION))).isEqualTo(Reason.CONTENTION);
    assertThat(ConsumerEngine.classify(e, judging(Fault.OTHER))).isEqualTo(Reason.HANDLER_FAILED);
    // the inbox's own refusals are decided before the store is asked
    assertThat(ConsumerEngine.classify(new InboxPayloadMismatchException("billing", "e-1"), judging(Fault.OUTAGE)))
        .isEqualTo(Reason.PAYLOAD_MISMATCH);
    assertThat(ConsumerEngine.classify(new IllegalArgumentException("eventId too long"), judging(Fault.OUTAGE)))
        .isEqualTo(Reason.INVALID_ID);
    // a store that knows nothing more: its own exceptions are outages (contention for a lock timeout)
    assertThat(ConsumerEngine.classify(store("08006", false, true), STORE)).isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(new StoreException("inbox", "no SQL at all", null), STORE))
        .isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(store("55P03", true, true), STORE)).isEqualTo(Reason.CONTENTION);
  }

  @Test
  void anythingElseTheHandlerThrowsIsItsOwnFailure() {
    assertThat(ConsumerEngine.classify(handler(new IllegalArgumentException("bad amount")), STORE))
        .isEqualTo(Reason.HANDLER_FAILED);
    assertThat(ConsumerEngine.classify(new StackOverflowError(), STORE)).isEqualTo(Reason.HANDLER_FAILED);
    assertThat(ConsumerEngine.classify(new IllegalStateException("no SQL"), STORE))
        .isEqualTo(Reason.HANDLER_FAILED);
    RuntimeException selfCaused = new RuntimeException() {
      @Override
      public synchronized Throwable getCause() {
        return this;
      }
    };
    assertThat(ConsumerEngine.classify(selfCaused, STORE)).isEqualTo(Reason.HANDLER_FAILED);
  }

  @Test
  void theBackoffDoublesUpToItsMaximumWithoutOverflowing() {
    ConsumerEngine e = ConsumerEngine.builder().backoff(Duration.ofMillis(100), Duration.ofSeconds(30)).build();

    assertThat(e.backoff(0)).isEqualTo(Duration.ofMillis(100));
    assertThat(e.backoff(1)).isEqualTo(Duration.ofMillis(100));
    assertThat(e.backoff(4)).isEqualTo(Duration.ofMillis(800));
    assertThat(e.backoff(9)).isEqualTo(Duration.ofMillis(25_600));
    assertThat(e.backoff(10)).isEqualTo(Duration.ofSeconds(30));
    assertThat(e.backoff(Long.MAX_VALUE)).isEqualTo(Duration.ofSeconds(30));
    ConsumerEngine fixed = ConsumerEngine.builder().backoff(Duration.ofMillis(250), Duration.ofMillis(250)).build();
    assertThat(fixed.backoff(1)).isEqualTo(fixed.backoff(60)).isEqualTo(Duration.ofMillis(250));
    ConsumerEngine atOnce = ConsumerEngine.builder().backoff(Duration.ZERO, Duration.ZERO).build();
    assertThat(atOnce.decide(Reason.HANDLER_FAILED, History.NONE).after()).isZero();
    assertThat(atOnce.decide(Reason.DATABASE_DOWN, History.NONE).after()).isZero();
  }

  @Test
  void theBuilderRefusesSettingsWithoutMeaning() {
    assertThatThrownBy(() -> ConsumerEngine.builder().maxAttempts(0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxAttempts");
    assertThatThrownBy(() -> ConsumerEngine.builder().maxAttempts(-2)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ConsumerEngine.builder().backoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("backoff");
    assertThatThrownBy(() -> ConsumerEngine.builder().backoff(Duration.ofMillis(-1), Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ConsumerEngine.builder().backoff(Duration.ZERO, Duration.ofHours(2)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> ConsumerEngine.builder().maxUncountedContention(-1))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new History(-1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Decision(Action.RETRY, Reason.HANDLER_FAILED, Duration.ofMillis(-1), 1))
        .isInstanceOf(IllegalArgumentException.class);
    ConsumerEngine defaults = ConsumerEngine.builder().build();
    assertThat(defaults.maxAttempts()).isEqualTo(5);
    assertThat(defaults.initialBackoff()).isEqualTo(Duration.ofMillis(100));
    assertThat(defaults.maxBackoff()).isEqualTo(Duration.ofSeconds(30));
    assertThat(defaults.maxUncountedContention()).isEqualTo(20);
    assertThat(defaults.toString()).contains("maxAttempts=5");
  }

  @Test
  void historiesAndDecisionsReadWellInLogs() {
    assertThat(History.of(-5)).isEqualTo(History.NONE);
    assertThat(History.of(Long.MAX_VALUE).failures()).isEqualTo(Integer.MAX_VALUE);
    assertThat(History.of(3).withOutages(2)).isEqualTo(new History(3, 0, 2));
    assertThat(new Decision(Action.RETRY, Reason.HANDLER_FAILED, Duration.ofMillis(200), 2))
        .hasToString("RETRY(handler_failed, after 200 ms, attempt 2)");
    assertThat(new Decision(Action.REJECT, Reason.MISSING_ID, Duration.ZERO, 0))
        .hasToString("REJECT(missing_event_id)");
    assertThat(Reason.DATABASE_DOWN.code()).isEqualTo("database_down");
  }

}
