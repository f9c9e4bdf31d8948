package dev.idem.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Checkpoint;
import dev.idem.core.Execution;
import dev.idem.core.Execution.Outcome;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.RecordState;
import dev.idem.core.ResponseTooLargeException;
import dev.idem.core.StoredResponse;
import dev.idem.core.spi.StoreTransaction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Atomic mode on a transactional store: the record and the business writes commit or roll back together. Extend it
 * with a store and a way to write and count one business row in the store's transaction.
 */
public abstract class AtomicExecutorContract extends IdemExecutorContract {

  /** Writes one business row tagged {@code marker} in the transaction. */
  protected abstract void writeBusinessRow(StoreTransaction tx, String marker) throws Exception;

  /** Counts committed business rows tagged {@code marker}. */
  protected abstract int countBusinessRows(String marker) throws Exception;

  /**
   * Writes one business row whose primary key is {@code id} in the transaction, as a handler does when it derives a
   * resource id from the idempotency key: a second insert of the same id must fail (after waiting for the first's
   * transaction). Also tagged {@code id} for {@link #countBusinessRows}.
   */
  protected abstract void writeUniqueBusinessRow(StoreTransaction tx, String id) throws Exception;

  /** Rounds of the race test (at least 200 in CI). */
  protected int raceRounds() {
    return 200;
  }

  /** Concurrent callers per round of the race test. */
  protected int raceThreads() {
    return 16;
  }

  private String marker(String key) {
    return scope.value() + "/" + key;
  }

  /** Whether {@link #pay} writes a row keyed by the idempotency key (a natural key) instead of a tagged row. */
  private boolean uniqueRows;

  private Execution pay(Idem idem, String key, String body, AtomicInteger calls) {
    return idem.atomic(request(key, body), tx -> {
      calls.incrementAndGet();
      if (uniqueRows) {
        writeUniqueBusinessRow(tx, marker(key));
      } else {
        writeBusinessRow(tx, marker(key));
      }
      return StoredResponse.json(201, "{\"id\":\"pay_" + key + "\",\"call\":" + calls.get() + "}");
    });
  }

  @Test
  void atomicStoresTheAnswerWithTheBusinessWriteAndReplaysIt() throws Exception {
    Idem idem = idem();
    AtomicInteger calls = new AtomicInteger();

    Execution first = pay(idem, "a-1", "{\"amount\":100}", calls);
    Execution replay = pay(idem, "a-1", "{\"amount\":100}", calls);

    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().body()).isEqualTo(first.response().body());
    assertThat(replay.response().headers()).isEqualTo(first.response().headers());
    assertThat(calls).hasValue(1);
    assertThat(countBusinessRows(marker("a-1"))).isEqualTo(1);
    assertThat(record("a-1").state()).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void atomicMismatchRunsNothing() throws Exception {
    Idem idem = idem();
    AtomicInteger calls = new AtomicInteger();
    pay(idem, "a-2", "{\"amount\":100,\"currency\":\"EUR\"}", calls);

    Execution mismatch = pay(idem, "a-2", "{\"amount\":101,\"currency\":\"EUR\"}", calls);

    assertThat(mismatch.outcome()).isEqualTo(Outcome.PAYLOAD_MISMATCH);
    assertThat(mismatch.differingFields()).containsExactly("amount");
    assertThat(calls).hasValue(1);
  }

  @Test
  void transientAnswerRollsBackTheBusinessWriteAndFreesTheKey() throws Exception {
    Idem idem = idem();

    Execution unavailable = idem.atomic(request("a-3", "{}"), tx -> {
      writeBusinessRow(tx, marker("a-3"));
      return StoredResponse.json(503, "{\"code\":\"DEPENDENCY.unavailable\"}");
    });
    int rowsAfterTransient = countBusinessRows(marker("a-3"));
    Execution retry = pay(idem, "a-3", "{}", new AtomicInteger());

    assertThat(unavailable.outcome()).isEqualTo(Outcome.NOT_STORED);
    assertThat(rowsAfterTransient).isZero();
    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(countBusinessRows(marker("a-3"))).isEqualTo(1);
  }

  @Test
  void exceptionRollsBackTheBusinessWriteAndLeavesNoRecord() throws Exception {
    Idem idem = idem();

    assertThatThrownBy(() -> idem.atomic(request("a-4", "{}"), tx -> {
      writeBusinessRow(tx, marker("a-4"));
      throw new IllegalStateException("provider exploded");
    })).hasMessage("provider exploded");

    assertThat(record("a-4")).isNull();
    assertThat(countBusinessRows(marker("a-4"))).isZero();
  }

  @Test
  void deterministicFailureIsKeptAndReplayed() throws Exception {
    Idem idem = idem();
    AtomicInteger calls = new AtomicInteger();

    Execution first = idem.atomic(request("a-5", "{}"), tx -> {
      calls.incrementAndGet();
      return StoredResponse.json(400, "{\"code\":\"VALIDATION.amount\"}");
    });
    Execution replay = idem.atomic(request("a-5", "{}"), tx -> {
      calls.incrementAndGet();
      return StoredResponse.json(201, "{}");
    });

    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().status()).isEqualTo(400);
    assertThat(record("a-5").state()).isEqualTo(RecordState.FAILED);
    assertThat(calls).hasValue(1);
  }

  @Test
  void responseOverTheLimitRollsBackAndSaysWhy() throws Exception {
    Idem idem = idemBuilder().policy(PAYMENTS, OperationPolicy.builder().maxResponseBytes(64).build()).build();

    assertThatThrownBy(() -> idem.atomic(request("a-6", "{}"), tx -> {
      writeBusinessRow(tx, marker("a-6"));
      return StoredResponse.of(200, "x".repeat(65));
    })).isInstanceOf(ResponseTooLargeException.class).hasMessageContaining("65 bytes; the limit is 64");

    assertThat(record("a-6")).isNull();
    assertThat(countBusinessRows(marker("a-6"))).isZero();
  }

  @Test
  void atomicRetryAfterTheTtlWithinTheRetentionIsRefusedAsExpiredAndWritesNothing() throws Exception {
    Idem idem = idem();
    AtomicInteger calls = new AtomicInteger();
    pay(idem, "a-late", "{\"v\":1}", calls);
    clock.advance(Duration.ofHours(1));

    Execution late = pay(idem, "a-late", "{\"v\":1}", calls);
    Execution other = pay(idem, "a-late", "{\"v\":2}", calls);

    assertThat(late.outcome()).isEqualTo(Outcome.KEY_EXPIRED);
    assertThat(other.outcome()).isEqualTo(Outcome.PAYLOAD_MISMATCH);
    assertThat(calls).hasValue(1);
    assertThat(countBusinessRows(marker("a-late"))).isEqualTo(1);
  }

  @Test
  void withoutLookupFirstARetryAfterTheTtlRollsBackItsWorkAndIsRefusedAsExpired() throws Exception {
    Idem idem = idemBuilder().policy(PAYMENTS,
        OperationPolicy.builder().ttl(Duration.ofHours(1)).lookupFirst(false).build()).build();
    AtomicInteger calls = new AtomicInteger();
    pay(idem, "o-late", "{\"v\":1}", calls);
    clock.advance(Duration.ofHours(1));

    Execution late = pay(idem, "o-late", "{\"v\":1}", calls);

    assertThat(late.outcome()).isEqualTo(Outcome.KEY_EXPIRED);
    assertThat(countBusinessRows(marker("o-late"))).as("the late retry's work rolled back").isEqualTo(1);
  }

  @Test
  void expiredRecordIsReplacedByANewExecutionAfterItsRetention() throws Exception {
    Idem idem = idem();
    AtomicInteger calls = new AtomicInteger();
    pay(idem, "a-7", "{\"v\":1}", calls);
    clock.advance(Duration.ofHours(1).plus(OperationPolicy.ofDefaults().retention()).plusMillis(1));

    Execution again = pay(idem, "a-7", "{\"v\":2}", calls);

    assertThat(again.outcome()).isEqualTo(Outcome.STORED);
    assertThat(calls).hasValue(2);
    IdempotencyRecord r = record("a-7");
    assertThat(r.createdAt()).isEqualTo(clock.instant());
  }

  @Test
  void racingDuplicatesGiveExactlyOneBusinessWriteAndOneAnswer() throws Exception {
    race(idem());
  }

  @Test
  void racingDuplicatesWithoutLookupFirstGiveExactlyOneBusinessWriteAndOneAnswer() throws Exception {
    race(idemBuilder().policy(PAYMENTS, OperationPolicy.builder().lookupFirst(false).build()).build());
  }

  @Test
  void racingDuplicatesWhoseBusinessRowsCollideStillReplayTheOneAnswer() throws Exception {
    uniqueRows = true;
    race(idem());
  }

  @Test
  void withoutLookupFirstADuplicateRollsBackItsWorkAndReplays() throws Exception {
    Idem idem = idemBuilder().policy(PAYMENTS, OperationPolicy.builder().lookupFirst(false).build()).build();
    AtomicInteger calls = new AtomicInteger();
    Execution first = pay(idem, "o-1", "{\"amount\":1}", calls);

    Execution replay = pay(idem, "o-1", "{\"amount\":1}", calls);
    Execution mismatch = pay(idem, "o-1", "{\"amount\":2}", calls);

    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().body()).isEqualTo(first.response().body());
    assertThat(mismatch.outcome()).isEqualTo(Outcome.PAYLOAD_MISMATCH);
    assertThat(calls).as("the duplicates ran the work, then rolled it back").hasValue(3);
    assertThat(countBusinessRows(marker("o-1"))).isEqualTo(1);
  }

  @Test
  void withoutLookupFirstADuplicateWhoseWorkFailsOnTheOriginalsRowsStillReplays() throws Exception {
    Idem idem = idemBuilder().policy(PAYMENTS, OperationPolicy.builder().lookupFirst(false).build()).build();
    AtomicInteger calls = new AtomicInteger();
    Execution first = pay(idem, "o-2", "{\"amount\":1}", calls);

    Execution replay = idem.atomic(request("o-2", "{\"amount\":1}"), tx -> {
      throw new IllegalStateException("duplicate key value violates unique constraint \"payment_pkey\"");
    });

    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().body()).isEqualTo(first.response().body());
  }

  @Test
  void checkedExceptionFromTheWorkArrivesAsWorkFailedWithItsCause() throws Exception {
    Idem idem = idem();
    java.io.IOException cause = new java.io.IOException("socket closed");

    assertThatThrownBy(() -> idem.atomic(request("a-8", "{}"), tx -> {
      writeBusinessRow(tx, marker("a-8"));
      throw cause;
    })).isInstanceOf(dev.idem.core.WorkFailedException.class).hasCause(cause);

    assertThat(record("a-8")).isNull();
    assertThat(countBusinessRows(marker("a-8"))).isZero();
  }

  @Test
  void transientStoreFailureIsRetriedAndGivesOneEffect() throws Exception {
    FaultInjectingStore faulty = new FaultInjectingStore(store)
        .failNext(FaultInjectingStore.Call.INSERT, FaultInjectingStore.deadlock());
    Idem idem = idemBuilder().store(faulty).build();
    AtomicInteger calls = new AtomicInteger();

    Execution e = pay(idem, "f-1", "{}", calls);

    assertThat(e.outcome()).isEqualTo(Outcome.STORED);
    assertThat(calls).as("the deadlock victim's round ran the work, rolled back, and ran again").hasValue(2);
    assertThat(countBusinessRows(marker("f-1"))).isEqualTo(1);
  }

  @Test
  void lockTimeoutBehindAnotherTransactionAnswersInProgressAndKeepsNothing() throws Exception {
    FaultInjectingStore faulty = new FaultInjectingStore(store)
        .failNext(FaultInjectingStore.Call.INSERT, FaultInjectingStore.lockTimeout());
    Idem idem = idemBuilder().store(faulty).build();

    Execution e = pay(idem, "f-2", "{}", new AtomicInteger());

    assertThat(e.outcome()).isEqualTo(Outcome.IN_PROGRESS);
    assertThat(e.retryAfter()).isPositive();
    assertThat(record("f-2")).isNull();
    assertThat(countBusinessRows(marker("f-2"))).isZero();
  }

  @Test
  void brokenStoreFailsTheExecutionAndKeepsNothing() throws Exception {
    FaultInjectingStore faulty = new FaultInjectingStore(store)
        .failNext(FaultInjectingStore.Call.INSERT, FaultInjectingStore.broken());
    Idem idem = idemBuilder().store(faulty).build();

    assertThatThrownBy(() -> pay(idem, "f-3", "{}", new AtomicInteger()))
        .isInstanceOf(dev.idem.core.StoreException.class).hasMessageContaining("injected failure");

    assertThat(record("f-3")).isNull();
    assertThat(countBusinessRows(marker("f-3"))).isZero();
  }

  @Test
  void failureReportedAfterTheCommitIsAnsweredFromTheRecordOnTheNextRound() throws Exception {
    FaultInjectingStore faulty = new FaultInjectingStore(store)
        .failNext(FaultInjectingStore.Call.COMMIT, FaultInjectingStore.deadlock());
    Idem idem = idemBuilder().store(faulty).build();
    AtomicInteger calls = new AtomicInteger();

    Execution e = pay(idem, "f-4", "{}", calls);

    // Stores that commit with the record insert (PostgreSQL) replay it; the others rolled back and ran again.
    assertThat(e.outcome()).isIn(Outcome.STORED, Outcome.REPLAYED);
    assertThat(countBusinessRows(marker("f-4"))).isEqualTo(1);
    assertThat(pay(idem, "f-4", "{}", calls).response()).isEqualTo(e.response());
  }

  // ------------------------------------------------------------------ phased mode without the look-up

  private static final String PHASED_ROWS = "POST /phased-rows";

  /**
   * A phased operation whose first phase writes a business row in its transaction: create (a row) -> charge (counted
   * in {@code charges}) -> capture (respond).
   */
  private Idem phasedRows(OperationPolicy policy, AtomicInteger creates, AtomicInteger charges) {
    return idemBuilder().policy(PHASED_ROWS, policy).phased(PhasedOperation.builder(PHASED_ROWS)
        .inTransaction("create", ctx -> {
          creates.incrementAndGet();
          writeBusinessRow(ctx.transaction(), marker(ctx.key().value()));
          return PhaseResult.next(Checkpoint.empty().with("payment_id", "pay_" + ctx.key().value()));
        })
        .outside("charge", ctx -> PhaseResult.next(ctx.checkpoint().with("charge", "ch_" + charges.incrementAndGet())))
        .inTransaction("capture", ctx -> PhaseResult.respond(StoredResponse.json(201, "{\"id\":\""
            + ctx.checkpoint().require("payment_id") + "\",\"charge\":\"" + ctx.checkpoint().require("charge")
            + "\"}")))
        .build()).build();
  }

  private IdempotentRequest phasedRowsRequest(String key) {
    return IdempotentRequest.of(scope, Operation.of(PHASED_ROWS), IdempotencyKey.of(key),
        "{\"amount\":100}".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void phasedFirstAttemptSkipsTheLookUpAndADuplicateOneRollsItsFirstPhaseBack() throws Exception {
    AtomicInteger creates = new AtomicInteger();
    AtomicInteger charges = new AtomicInteger();
    Idem idem = phasedRows(OperationPolicy.ofDefaults(), creates, charges);

    Execution first = idem.phased(phasedRowsRequest("pf-1").firstAttempt(true));
    Execution againAsFirst = idem.phased(phasedRowsRequest("pf-1").firstAttempt(true));
    int createsAfterTheFirstAttempts = creates.get();
    Execution retry = idem.phased(phasedRowsRequest("pf-1"));

    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
    for (Execution replay : List.of(againAsFirst, retry)) {
      assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
      assertThat(replay.response().body()).isEqualTo(first.response().body());
    }
    assertThat(createsAfterTheFirstAttempts).as("the second first attempt ran the first phase, then rolled it back")
        .isEqualTo(2);
    assertThat(creates).as("a retry looks the record up before the first phase").hasValue(2);
    assertThat(charges).hasValue(1);
    assertThat(countBusinessRows(marker("pf-1"))).isEqualTo(1);
  }

  @Test
  void phasedWithoutLookupFirstADuplicateRollsItsFirstPhaseBackAndReplays() throws Exception {
    AtomicInteger creates = new AtomicInteger();
    AtomicInteger charges = new AtomicInteger();
    Idem idem = phasedRows(OperationPolicy.builder().lookupFirst(false).build(), creates, charges);
    Execution first = idem.phased(phasedRowsRequest("pf-2"));

    Execution replay = idem.phased(phasedRowsRequest("pf-2"));

    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().body()).isEqualTo(first.response().body());
    assertThat(creates).hasValue(2);
    assertThat(charges).hasValue(1);
    assertThat(countBusinessRows(marker("pf-2"))).isEqualTo(1);
  }

  @Test
  void phasedFirstAttemptsAfterTheTtlAreRefusedAsExpiredAndAfterTheRetentionRunAgain() throws Exception {
    AtomicInteger creates = new AtomicInteger();
    AtomicInteger charges = new AtomicInteger();
    OperationPolicy policy = OperationPolicy.builder().ttl(Duration.ofHours(1)).build();
    Idem idem = phasedRows(policy, creates, charges);
    Execution first = idem.phased(phasedRowsRequest("pf-late").firstAttempt(true));
    clock.advance(Duration.ofHours(1));

    Execution late = idem.phased(phasedRowsRequest("pf-late").firstAttempt(true));
    int rowsAfterTheLateOne = countBusinessRows(marker("pf-late"));
    clock.advance(policy.retention().plusMillis(1));
    Execution again = idem.phased(phasedRowsRequest("pf-late").firstAttempt(true));

    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
    assertThat(late.outcome()).isEqualTo(Outcome.KEY_EXPIRED);
    assertThat(rowsAfterTheLateOne).as("the late first attempt's first phase rolled back").isEqualTo(1);
    assertThat(again.outcome()).as("the old row is deleted and the key runs again").isEqualTo(Outcome.STORED);
    // the last one ran its first phase twice: into the old row (rolled back), then after deleting it
    assertThat(creates).hasValue(4);
    assertThat(charges).hasValue(2);
    assertThat(countBusinessRows(marker("pf-late"))).isEqualTo(2);
  }

  @Test
  void racingPhasedFirstAttemptsGiveOneFirstPhaseOneChargeAndOneAnswer() throws Exception {
    int threads = raceThreads();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    AtomicInteger creates = new AtomicInteger();
    AtomicInteger charges = new AtomicInteger();
    Idem idem = phasedRows(OperationPolicy.ofDefaults(), creates, charges);
    try {
      for (int round = 0; round < raceRounds(); round++) {
        String key = "phased-race-" + round;
        CyclicBarrier start = new CyclicBarrier(threads);
        int createsBefore = creates.get();
        int chargesBefore = charges.get();
        List<Future<Execution>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          futures.add(pool.submit(() -> {
            start.await(30, TimeUnit.SECONDS);
            return idem.phased(phasedRowsRequest(key).firstAttempt(true));
          }));
        }
        List<Execution> results = new ArrayList<>();
        for (Future<Execution> f : futures) {
          results.add(f.get(60, TimeUnit.SECONDS));
        }

        // every caller skipped the look-up, so every one ran the first phase; all but one rolled it back
        assertThat(creates.get() - createsBefore).as("first phases run in round %d", round).isEqualTo(threads);
        assertThat(countBusinessRows(marker(key))).as("business rows in round %d", round).isEqualTo(1);
        assertThat(charges.get() - chargesBefore).as("charges in round %d", round).isEqualTo(1);
        assertThat(results.stream().filter(e -> e.outcome() == Outcome.STORED)).as("round %d", round).hasSize(1);
        byte[] body = results.stream().filter(e -> e.outcome() == Outcome.STORED).findFirst().orElseThrow()
            .response().body();
        for (Execution e : results) {
          assertThat(e.outcome()).as("round %d", round).isIn(Outcome.STORED, Outcome.REPLAYED, Outcome.IN_PROGRESS);
          if (e.outcome() == Outcome.REPLAYED) {
            assertThat(e.response().body()).as("round %d", round).isEqualTo(body);
          }
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aDuplicateFirstAttemptWhoseWorkAnswersAConflictGetsTheStoredAnswer() throws Exception {
    AtomicInteger runs = new AtomicInteger();
    String phasedOperation = "POST /conflicts";
    Idem idem = idemBuilder().phased(PhasedOperation.builder(phasedOperation)
        .inTransaction("create", ctx -> runs.incrementAndGet() == 1
            ? PhaseResult.respond(StoredResponse.json(201, "{\"id\":\"c-1\"}"))
            : PhaseResult.respond(StoredResponse.json(409, "{\"code\":\"CONFLICT.exists\"}")))
        .build()).build();
    IdempotentRequest phasedRequest = IdempotentRequest.of(scope, Operation.of(phasedOperation),
        IdempotencyKey.of("conflict-1"), "{}".getBytes(StandardCharsets.UTF_8)).firstAttempt(true);
    AtomicInteger calls = new AtomicInteger();
    IdempotentRequest atomicRequest = request("conflict-2", "{}").firstAttempt(true);

    Execution phasedFirst = idem.phased(phasedRequest);
    Execution phasedDuplicate = idem.phased(phasedRequest);
    Execution atomicFirst =
        idem.atomic(atomicRequest, tx -> StoredResponse.json(201, "{\"n\":" + calls.incrementAndGet() + "}"));
    Execution atomicDuplicate = idem.atomic(atomicRequest, tx -> {
      calls.incrementAndGet();
      return StoredResponse.json(409, "{\"code\":\"CONFLICT.exists\"}");
    });

    assertThat(runs).as("the duplicate skipped the look-up and ran its phase").hasValue(2);
    assertThat(phasedDuplicate.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(phasedDuplicate.response().body()).isEqualTo(phasedFirst.response().body());
    assertThat(calls).hasValue(2);
    assertThat(atomicDuplicate.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(atomicDuplicate.response().body()).isEqualTo(atomicFirst.response().body());
  }

  private void race(Idem idem) throws Exception {
    int threads = raceThreads();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    int raced = 0;
    try {
      // the rounds asked for, then more (at most ten times as many) until one of them ran the work concurrently: on a
      // loaded machine the threads released by the barrier can reach the store one after another for many rounds
      for (int round = 0; round < raceRounds() || (raced == 0 && round < 10 * raceRounds()); round++) {
        String key = "race-" + round;
        CyclicBarrier start = new CyclicBarrier(threads);
        AtomicInteger calls = new AtomicInteger();
        List<Future<Execution>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          futures.add(pool.submit(() -> {
            start.await(30, TimeUnit.SECONDS);
            return pay(idem, key, "{\"amount\":100}", calls);
          }));
        }
        List<Execution> results = new ArrayList<>();
        for (Future<Execution> f : futures) {
          results.add(f.get(60, TimeUnit.SECONDS));
        }

        assertThat(countBusinessRows(marker(key))).as("business rows in round %d", round).isEqualTo(1);
        List<Execution> answered = results.stream().filter(e -> e.response() != null).toList();
        assertThat(answered.stream().filter(e -> e.outcome() == Outcome.STORED)).as("round %d", round).hasSize(1);
        byte[] body = answered.get(0).response().body();
        for (Execution e : results) {
          assertThat(e.outcome()).as("round %d", round).isIn(Outcome.STORED, Outcome.REPLAYED, Outcome.IN_PROGRESS);
          if (e.response() != null) {
            assertThat(e.response().body()).as("round %d", round).isEqualTo(body);
          }
        }
        raced += calls.get() > 1 ? 1 : 0;
      }
    } finally {
      pool.shutdownNow();
    }
    // proves the contended path ran: in some rounds several callers did the work and all but one rolled back
    assertThat(raced).as("rounds where duplicates ran the work concurrently").isPositive();
  }
}
