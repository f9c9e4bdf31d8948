package dev.idem.outbox.consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.StoreException;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.InboxPayloadMismatchException;
import dev.idem.outbox.InboxResult;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The one decision rule of every inbox consumer, without a broker or a database. */
class ConsumerEngineTest {
  private static final BooleanSupplier ANSWERS = () -> true;
  private static final BooleanSupplier AWAY = () -> false;
  private static final BooleanSupplier NOT_ASKED = () -> {
    throw new AssertionError("the database must not be probed for this failure");
  };

  private final ConsumerEngine engine = ConsumerEngine.builder().maxAttempts(3)
      .backoff(Duration.ofMillis(100), Duration.ofSeconds(1)).build();

  private static StoreException store(String state, boolean lockTimeout, boolean transientFailure) {
    SQLException cause = new SQLException("from the driver", state);
    return new StoreException("inbox", "committing event e-1 for billing failed", state, lockTimeout,
        transientFailure, cause);
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
    assertThat(engine.failed(new IllegalArgumentException("eventId too long"), History.NONE, NOT_ASKED))
        .isEqualTo(engine.refused(Reason.INVALID_ID));
    assertThatThrownBy(() -> engine.refused(Reason.HANDLER_FAILED)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> engine.decide(Reason.PROCESSED, History.NONE))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("processed(result)");
  }

  @Test
  void aPayloadMismatchIsDeadLetteredAtOnceAndCounted() {
    Decision d = engine.failed(new InboxPayloadMismatchException("billing", "e-1"), History.NONE, NOT_ASKED);

    assertThat(d).isEqualTo(new Decision(Action.DEAD_LETTER, Reason.PAYLOAD_MISMATCH, Duration.ZERO, 1));
    assertThat(d.counted()).isTrue();
  }

  @Test
  void aFailingHandlerIsRetriedWithAGrowingBackoffThenDeadLetteredOnTheLastAttempt() {
    Throwable e = handler(new IllegalStateException("boom"));
    Decision first = engine.failed(e, History.NONE, NOT_ASKED);
    Decision second = engine.failed(e, History.NONE.next(first), NOT_ASKED);
    Decision third = engine.failed(e, History.NONE.next(first).next(second), NOT_ASKED);

    assertThat(first).isEqualTo(new Decision(Action.RETRY, Reason.HANDLER_FAILED, Duration.ofMillis(100), 1));
    assertThat(second).isEqualTo(new Decision(Action.RETRY, Reason.HANDLER_FAILED, Duration.ofMillis(200), 2));
    assertThat(third).isEqualTo(new Decision(Action.DEAD_LETTER, Reason.HANDLER_FAILED, Duration.ZERO, 3));
    assertThat(first.counted()).isTrue();
    assertThat(engine.failed(new AssertionError("an Error"), History.of(7), NOT_ASKED).action())
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

    Decision first = engine.failed(refused, lastAttempt, NOT_ASKED);
    History after = lastAttempt.next(first);
    Decision second = engine.failed(refused, after, NOT_ASKED);

    assertThat(first).isEqualTo(new Decision(Action.PAUSE, Reason.DATABASE_DOWN, Duration.ofMillis(100), 2));
    assertThat(first.counted()).isFalse();
    assertThat(first.triesAgain()).isTrue();
    assertThat(after).isEqualTo(new History(2, 0, 1));
    assertThat(second.after()).isEqualTo(Duration.ofMillis(200));
    assertThat(engine.decide(Reason.DATABASE_DOWN, new History(2, 0, 40)).after()).isEqualTo(Duration.ofSeconds(1));
    assertThat(engine.failed(handler(new IllegalStateException()), after, NOT_ASKED).action())
        .isEqualTo(Action.DEAD_LETTER);
  }

  @Test
  void passingConflictsAreRetriedWithoutCountingThenCountAsTheMessagesFailures() {
    ConsumerEngine twice = ConsumerEngine.builder().maxAttempts(2).maxUncountedContention(2).build();
    Throwable deadlock = handler(new SQLTransactionRollbackException("deadlock detected", "40P01"));

    Decision first = twice.failed(deadlock, History.NONE, NOT_ASKED);
    Decision second = twice.failed(deadlock, History.NONE.next(first), NOT_ASKED);
    History h = History.NONE.next(first).next(second);
    Decision third = twice.failed(deadlock, h, NOT_ASKED);
    Decision fourth = twice.failed(deadlock, h.next(third), NOT_ASKED);

    assertThat(first).isEqualTo(new Decision(Action.RETRY, Reason.CONTENTION, Duration.ofMillis(100), 0));
    assertThat(first.counted()).isFalse();
    assertThat(second.after()).isEqualTo(Duration.ofMillis(200));
    assertThat(h).isEqualTo(new History(0, 2, 0));
    assertThat(third).isEqualTo(new Decision(Action.RETRY, Reason.HANDLER_FAILED, Duration.ofMillis(100), 1));
    assertThat(fourth).isEqualTo(new Decision(Action.DEAD_LETTER, Reason.HANDLER_FAILED, Duration.ZERO, 2));
  }

  @Test
  void aStoreFailureOfTheInboxIsTheDatabasesUnlessItIsAConflictOrTheHandlersWritesAtTheCommit() {
    assertThat(ConsumerEngine.classify(store("08006", false, true), NOT_ASKED)).isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(store(null, false, false), NOT_ASKED)).isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(new StoreException("inbox", "no SQL at all", null), NOT_ASKED))
        .isEqualTo(Reason.DATABASE_DOWN);
    StoreException missingTable = store("42P01", false, false);
    assertThat(missingTable.isSchemaFault()).isTrue();
    assertThat(ConsumerEngine.classify(missingTable, NOT_ASKED)).isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(store("25006", false, false), NOT_ASKED)).isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(store("40001", false, true), NOT_ASKED)).isEqualTo(Reason.CONTENTION);
    assertThat(ConsumerEngine.classify(store("40P01", false, true), NOT_ASKED)).isEqualTo(Reason.CONTENTION);
    assertThat(ConsumerEngine.classify(store("55P03", true, true), NOT_ASKED)).isEqualTo(Reason.CONTENTION);
    assertThat(ConsumerEngine.classify(store("HY000", true, true), NOT_ASKED)).isEqualTo(Reason.CONTENTION);
    // a deferred constraint fails at COMMIT, after the handler returned: the handler's writes, counted
    assertThat(ConsumerEngine.classify(store("23505", false, false), NOT_ASKED)).isEqualTo(Reason.HANDLER_FAILED);
    assertThat(ConsumerEngine.classify(store("22001", false, false), NOT_ASKED)).isEqualTo(Reason.HANDLER_FAILED);
    SQLException mariaDeadlock = new SQLException("Deadlock found", "HY000", 1213);
    assertThat(ConsumerEngine.classify(new StoreException("inbox", "insert failed", null, false, true, mariaDeadlock),
        NOT_ASKED)).isEqualTo(Reason.CONTENTION);
  }

  @Test
  void theHandlersSqlFailureIsTheDatabasesOnlyWhenItRefusesEveryoneOrDoesNotAnswer() {
    assertThat(ConsumerEngine.classify(handler(new SQLException("read-only transaction", "25006")), NOT_ASKED))
        .isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(handler(new SQLException("too many connections", "53300")), NOT_ASKED))
        .isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(handler(new SQLException("read only", "HY000", 1290)), NOT_ASKED))
        .isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(handler(new SQLException("password failed", "28P01")), NOT_ASKED))
        .isEqualTo(Reason.DATABASE_DOWN);
    assertThat(ConsumerEngine.classify(handler(new SQLException("serialization", "40001")), NOT_ASKED))
        .isEqualTo(Reason.CONTENTION);
    assertThat(ConsumerEngine.classify(handler(new SQLException("lock wait timeout", "HY000", 1205)), NOT_ASKED))
        .isEqualTo(Reason.CONTENTION);
    assertThat(ConsumerEngine.classify(handler(new SQLTransactionRollbackException("rolled back")), NOT_ASKED))
        .isEqualTo(Reason.CONTENTION);
    assertThat(ConsumerEngine.classify(handler(new SQLTimeoutException("statement timeout", "57014")), NOT_ASKED))
        .isEqualTo(Reason.HANDLER_FAILED);
    assertThat(ConsumerEngine.classify(handler(new SQLException("syntax error", "42601")), NOT_ASKED))
        .isEqualTo(Reason.HANDLER_FAILED);
    for (SQLException lost : new SQLException[] {new SQLTransientConnectionException("gone", "08006"),
        new SQLNonTransientConnectionException("gone"), new SQLRecoverableException("gone"),
        new SQLException("gone", "08003")}) {
      assertThat(ConsumerEngine.classify(handler(lost), ANSWERS)).as(lost.toString()).isEqualTo(Reason.HANDLER_FAILED);
      assertThat(ConsumerEngine.classify(handler(lost), AWAY)).as(lost.toString()).isEqualTo(Reason.DATABASE_DOWN);
    }
    // an SQL failure deep in the causes, under the handler's own wrappers, counts alike
    Throwable wrapped = handler(new IllegalStateException("could not book", new RuntimeException(
        new SQLException("read-only", "25006"))));
    assertThat(ConsumerEngine.classify(wrapped, NOT_ASKED)).isEqualTo(Reason.DATABASE_DOWN);
  }

  @Test
  void anythingElseTheHandlerThrowsIsItsOwnFailure() {
    assertThat(ConsumerEngine.classify(handler(new IllegalArgumentException("bad amount")), NOT_ASKED))
        .isEqualTo(Reason.HANDLER_FAILED);
    assertThat(ConsumerEngine.classify(new StackOverflowError(), NOT_ASKED)).isEqualTo(Reason.HANDLER_FAILED);
    assertThat(ConsumerEngine.classify(new IllegalStateException("no SQL"), NOT_ASKED))
        .isEqualTo(Reason.HANDLER_FAILED);
    RuntimeException selfCaused = new RuntimeException() {
      @Override
      public synchronized Throwable getCause() {
        return this;
      }
    };
    assertThat(ConsumerEngine.classify(selfCaused, NOT_ASKED)).isEqualTo(Reason.HANDLER_FAILED);
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
