package dev.idem.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.AuditEntry;
import dev.idem.core.Checkpoint;
import dev.idem.core.Completer;
import dev.idem.core.Execution;
import dev.idem.core.Execution.Outcome;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.KeepPolicy;
import dev.idem.core.KeyExpiredException;
import dev.idem.core.LeaseLostException;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.core.OutcomeUncertainException;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.Reconciler;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.ResponseTooLargeException;
import dev.idem.core.Scope;
import dev.idem.core.StoreException;
import dev.idem.core.StoredResponse;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.spi.IdemListener;
import dev.idem.core.spi.IdempotencyStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The executor's behaviour in phased and leased modes, on any store. Extend it with {@link #createStore()};
 * {@link AtomicExecutorContract} adds the atomic mode for transactional stores.
 */
public abstract class IdemExecutorContract {
  protected static final String PAYMENTS = "POST /payments";
  protected static final Duration LEASE = Duration.ofSeconds(30);
  private static final String HASH = "0".repeat(64);

  protected IdempotencyStore store;
  protected MutableClock clock;
  protected Scope scope;
  protected final List<String> events = new CopyOnWriteArrayList<>();
  /** Calls to the fake external system, per derived key. */
  protected final Map<String, AtomicInteger> externalCalls = new ConcurrentHashMap<>();
  /** Phase runs, per key and phase name. */
  protected final Map<String, AtomicInteger> phaseRuns = new ConcurrentHashMap<>();
  /** Makes the next call to the external system fail once. */
  protected final AtomicBoolean externalFailsOnce = new AtomicBoolean();
  /** Runs inside the "charge" phase, once, before the external call; for takeover scenarios. */
  protected volatile Runnable duringCharge;

  protected abstract IdempotencyStore createStore() throws Exception;

  protected void closeStore(IdempotencyStore store) throws Exception {}

  @BeforeEach
  void setUpExecutor() throws Exception {
    store = createStore();
    clock = MutableClock.startingNow();
    scope = Scope.of("exec-" + UUID.randomUUID());
  }

  @AfterEach
  void tearDownExecutor() throws Exception {
    closeStore(store);
  }

  protected IdemListener recordingListener() {
    return new IdemListener() {
      @Override
      public void onExecution(String instance, Execution execution, Duration elapsed) {
        events.add("execution " + execution.outcome());
      }

      @Override
      public void onTransition(String instance, RecordKey key, RecordState from, RecordState to, String phase) {
        events.add("transition " + from + " -> " + to);
      }

      @Override
      public void onLeaseExpired(String instance, IdempotencyRecord expired) {
        events.add("lease expired");
      }

      @Override
      public void onCompleterRecovery(String instance, RecordKey key, boolean recovered, Throwable failure) {
        events.add("completer " + (recovered ? "recovered" : "failed"));
      }

      @Override
      public void onUncertain(String instance, IdempotencyRecord record, Throwable cause) {
        events.add("uncertain " + record.key().key());
      }

      @Override
      public void onReconciled(String instance, RecordKey key, Reconciler.Verdict.Result result, boolean applied,
          Throwable failure) {
        events.add("reconciled " + result + " " + applied);
      }

      @Override
      public void onResolved(String instance, AuditEntry entry) {
        events.add("resolved " + entry.actor() + " " + entry.action());
      }
    };
  }

  protected Idem.Builder idemBuilder() {
    return Idem.builder().name("contract").store(store).clock(clock).listener(recordingListener())
        .sleeper(d -> clock.advance(d))
        .policy(PAYMENTS, OperationPolicy.builder().lease(LEASE).ttl(Duration.ofHours(1)).build())
        .phased(payments());
  }

  protected Idem idem() {
    return idemBuilder().build();
  }

  /** A request of the leased operation {@code POST /leased} (default policy) with the body {@code {"a":1}}. */
  protected IdempotentRequest leasedRequest(String key) {
    return IdempotentRequest.of(scope, Operation.of("POST /leased"), IdempotencyKey.of(key),
        "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
  }

  protected IdempotentRequest request(String key, String json) {
    return IdempotentRequest.of(scope, Operation.of(PAYMENTS), IdempotencyKey.of(key),
        json.getBytes(StandardCharsets.UTF_8));
  }

  private void ran(String key, String phase) {
    phaseRuns.computeIfAbsent(key + "/" + phase, k -> new AtomicInteger()).incrementAndGet();
  }

  /** Runs {@link #duringCharge} once, if it is set. */
  private void duringChargeOnce() {
    Runnable hook = duringCharge;
    if (hook != null) {
      duringCharge = null;
      hook.run();
    }
  }

  protected int runs(String key, String phase) {
    AtomicInteger n = phaseRuns.get(key + "/" + phase);
    return n == null ? 0 : n.get();
  }

  /** create (in a transaction) -> charge (external, derived key) -> capture (respond). */
  protected PhasedOperation payments() {
    return PhasedOperation.builder(PAYMENTS)
        .inTransaction("create", ctx -> {
          ran(ctx.key().value(), "create");
          String amount = ctx.request().map(r -> new String(r.body(), StandardCharsets.UTF_8)).orElse("?");
          return PhaseResult.next(Checkpoint.empty().with("payment_id", "pay_" + ctx.key()).with("body", amount));
        })
        .outside("charge", ctx -> {
          ran(ctx.key().value(), "charge");
          duringChargeOnce();
          String derived = ctx.derivedKey("charge");
          if (externalFailsOnce.getAndSet(false)) {
            return PhaseResult.respond(StoredResponse.json(503, "{\"code\":\"DEPENDENCY.unavailable\"}"));
          }
          externalCalls.computeIfAbsent(derived, k -> new AtomicInteger()).incrementAndGet();
          return PhaseResult.next(ctx.checkpoint().with("charge_id", "ch_" + derived));
        })
        .inTransaction("capture", ctx -> {
          ran(ctx.key().value(), "capture");
          Checkpoint cp = ctx.checkpoint();
          return PhaseResult.respond(StoredResponse.json(201,
              "{\"id\":\"" + cp.require("payment_id") + "\",\"charge\":\"" + cp.require("charge_id") + "\"}"));
        })
        .build();
  }

  /** The derived key of the "charge" call of a payment key in this test's scope, from its stored record. */
  protected String derived(String key) throws Exception {
    return record(key).derive("charge");
  }

  protected IdempotencyRecord record(String key) throws Exception {
    RecordKey rk = new RecordKey(scope, Operation.of(PAYMENTS), IdempotencyKey.of(key));
    Optional<IdempotencyRecord> r = store.inTransaction(tx -> store.find(tx, rk));
    return r.orElse(null);
  }

  // ------------------------------------------------------------------ phased

  @Test
  void phasedRunsEveryPhaseOnceAndStoresTheAnswer() throws Exception {
    Idem idem = idem();

    Execution first = idem.phased(request("p-1", "{\"amount\":100}"));

    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
    assertThat(first.response().status()).isEqualTo(201);
    assertThat(first.response().bodyAsString())
        .isEqualTo("{\"id\":\"pay_p-1\",\"charge\":\"ch_" + derived("p-1") + "\"}");
    assertThat(List.of(runs("p-1", "create"), runs("p-1", "charge"), runs("p-1", "capture")))
        .containsExactly(1, 1, 1);
    IdempotencyRecord stored = record("p-1");
    assertThat(stored.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(stored.recoveryPoint()).isEqualTo("charge");
    assertThat(stored.leaseOwner()).isNull();
  }

  @Test
  void phasedReplayReturnsTheStoredAnswerByteForByteWithoutRunningPhases() throws Exception {
    Idem idem = idem();
    Execution first = idem.phased(request("p-2", "{\"amount\":100}"));
    clock.advance(Duration.ofMinutes(3));

    Execution replay = idem.phased(request("p-2", "{ \"amount\" : 100 }"));

    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response()).isEqualTo(first.response());
    assertThat(replay.response().body()).isEqualTo(first.response().body());
    assertThat(replay.keyAge()).isEqualTo(Duration.ofMinutes(3));
    assertThat(runs("p-2", "create")).isEqualTo(1);
  }

  @Test
  void sameKeyWithAnotherBodyIsAMismatchNamingTheFields() throws Exception {
    Idem idem = idem();
    idem.phased(request("p-3", "{\"amount\":100,\"currency\":\"EUR\",\"note\":\"x\"}"));

    Execution mismatch = idem.phased(request("p-3", "{\"amount\":200,\"currency\":\"EUR\",\"extra\":1}"));

    assertThat(mismatch.outcome()).isEqualTo(Outcome.PAYLOAD_MISMATCH);
    assertThat(mismatch.differingFields()).containsExactly("amount", "extra", "note");
    assertThat(mismatch.response()).isNull();
  }

  @Test
  void sameKeyInAnotherScopeIsAnIndependentRequest() throws Exception {
    Idem idem = idem();
    idem.phased(request("p-shared", "{\"amount\":100}"));
    IdempotentRequest other = IdempotentRequest.of(Scope.of(scope.value() + "-bob"), Operation.of(PAYMENTS),
        IdempotencyKey.of("p-shared"), "{\"amount\":999}".getBytes(StandardCharsets.UTF_8));

    Execution second = idem.phased(other);

    assertThat(second.outcome()).isEqualTo(Outcome.STORED);
    assertThat(runs("p-shared", "create")).isEqualTo(2);
  }

  @Test
  void inFlightDuplicateGetsInProgressWithTheLeaseSecondsLeft() throws Exception {
    Idem idem = idem();
    Execution[] duplicate = new Execution[1];
    duringCharge = () -> {
      clock.advance(Duration.ofMillis(10_500));
      duplicate[0] = idem.phased(request("p-4", "{\"amount\":100}"));
    };

    Execution first = idem.phased(request("p-4", "{\"amount\":100}"));

    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
    assertThat(duplicate[0].outcome()).isEqualTo(Outcome.IN_PROGRESS);
    assertThat(duplicate[0].retryAfter()).isEqualTo(Duration.ofSeconds(20));
  }

  @Test
  void inFlightDuplicateWaitsUpToTheBoundAndThenAnswersInProgress() throws Exception {
    Idem idem = idemBuilder().policy(PAYMENTS, OperationPolicy.builder().lease(LEASE)
        .waitInFlight(Duration.ofSeconds(2)).build()).build();
    Execution[] duplicate = new Execution[1];
    Instant[] waited = new Instant[2];
    duringCharge = () -> {
      waited[0] = clock.instant();
      duplicate[0] = idem.phased(request("p-wait", "{\"amount\":1}"));
      waited[1] = clock.instant();
    };

    idem.phased(request("p-wait", "{\"amount\":1}"));

    assertThat(duplicate[0].outcome()).isEqualTo(Outcome.IN_PROGRESS);
    assertThat(Duration.between(waited[0], waited[1])).isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void inFlightWaitEndsByItsBoundWhenTheWallClockStepsBack() throws Exception {
    Duration[] slept = {Duration.ZERO};
    Idem idem = idemBuilder().policy(PAYMENTS, OperationPolicy.builder().lease(LEASE)
        .waitInFlight(Duration.ofSeconds(2)).build()).sleeper(d -> {
          if (slept[0].isZero()) {
            clock.advance(Duration.ofHours(-1)); // an NTP step back while the duplicate waits
          }
          slept[0] = slept[0].plus(d);
          clock.advance(d);
          if (slept[0].compareTo(Duration.ofMinutes(1)) > 0) {
            throw new AssertionError("the in-flight wait went on past its bound: " + slept[0]);
          }
        }).build();
    Execution[] duplicate = new Execution[1];
    duringCharge = () -> {
      Instant before = clock.instant();
      duplicate[0] = idem.phased(request("p-step", "{\"amount\":1}"));
      clock.set(before.plus(slept[0])); // the step is undone, so the first request goes on as it would have
    };

    Execution first = idem.phased(request("p-step", "{\"amount\":1}"));

    assertThat(duplicate[0].outcome()).isEqualTo(Outcome.IN_PROGRESS);
    // at most the bound, which a loaded machine's real time can end early (the wait is timed on it too); never the
    // hour the wall clock stepped back
    assertThat(slept[0]).as("the wait, by the sleeps it asked for").isLessThanOrEqualTo(Duration.ofSeconds(2))
        .isGreaterThan(Duration.ZERO);
    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
  }

  @Test
  void transientFailureReleasesTheLeaseAndTheRetryResumesAfterTheRecoveryPoint() throws Exception {
    Idem idem = idem();
    externalFailsOnce.set(true);

    Execution failed = idem.phased(request("p-5", "{\"amount\":100}"));
    IdempotencyRecord between = record("p-5");
    Execution retry = idem.phased(request("p-5", "{\"amount\":100}"));

    assertThat(failed.outcome()).isEqualTo(Outcome.NOT_STORED);
    assertThat(failed.response().status()).isEqualTo(503);
    assertThat(between.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(between.recoveryPoint()).isEqualTo("create");
    assertThat(between.lockedUntil()).isBeforeOrEqualTo(clock.instant());
    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(runs("p-5", "create")).isEqualTo(1);
    assertThat(runs("p-5", "charge")).isEqualTo(2);
    assertThat(externalCalls.get(derived("p-5"))).hasValue(1);
  }

  // ------------------------------------------------------------------ repeatable outside phases

  private static final String REPEATABLE = "POST /payments-repeatable";

  /** The payments operation with its charge declared repeatable; {@code failCapture} fails the capture once. */
  private Idem repeatableIdem(AtomicBoolean failCapture) {
    PhasedOperation.Builder b = PhasedOperation.builder(REPEATABLE)
        .inTransaction("create", ctx -> PhaseResult.next(Checkpoint.empty().with("payment_id", "pay_" + ctx.key())))
        .outsideRepeatable("charge", ctx -> {
          ran(ctx.key().value(), "charge");
          duringChargeOnce();
          String derived = ctx.derivedKey("charge");
          externalCalls.computeIfAbsent(derived, k -> new AtomicInteger()).incrementAndGet();
          return PhaseResult.next(ctx.checkpoint().with("charge_id", "ch_" + derived));
        })
        .inTransaction("capture", ctx -> {
          ran(ctx.key().value(), "capture");
          if (failCapture.getAndSet(false)) {
            throw new IllegalStateException("capture failed");
          }
          return PhaseResult.respond(StoredResponse.json(201, "{\"charge\":\"" + ctx.checkpoint().require("charge_id")
              + "\"}"));
        });
    return idemBuilder().policy(REPEATABLE, OperationPolicy.builder().lease(LEASE).ttl(Duration.ofHours(1)).build())
        .phased(b.build()).build();
  }

  private IdempotentRequest repeatableRequest(String key) {
    return IdempotentRequest.of(scope, Operation.of(REPEATABLE), IdempotencyKey.of(key),
        "{\"amount\":5}".getBytes(StandardCharsets.UTF_8));
  }

  private IdempotencyRecord repeatableRecord(String key) throws Exception {
    RecordKey rk = new RecordKey(scope, Operation.of(REPEATABLE), IdempotencyKey.of(key));
    return store.inTransaction(tx -> store.find(tx, rk)).orElse(null);
  }

  @Test
  void repeatableOutsidePhaseCommitsItsCheckpointWithTheNextPhase() throws Exception {
    Idem idem = repeatableIdem(new AtomicBoolean());
    Idem plain = idem();

    Execution e = idem.phased(repeatableRequest("r-1"));
    plain.phased(request("r-1", "{\"amount\":5}"));

    assertThat(e.outcome()).isEqualTo(Outcome.STORED);
    assertThat(e.response().bodyAsString()).contains("ch_");
    assertThat(repeatableRecord("r-1").version()).as("one write fewer than a plain outside phase")
        .isEqualTo(record("r-1").version() - 1);
    assertThat(repeatableRecord("r-1").recoveryPoint()).isEqualTo("create");
  }

  @Test
  void failureAfterARepeatablePhaseRunsItAgainWithTheSameDerivedKey() throws Exception {
    Idem idem = repeatableIdem(new AtomicBoolean(true));

    assertThatThrownBy(() -> idem.phased(repeatableRequest("r-2"))).hasMessage("capture failed");
    IdempotencyRecord between = repeatableRecord("r-2");
    Execution retry = idem.phased(repeatableRequest("r-2"));

    assertThat(between.recoveryPoint()).isEqualTo("create");
    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(runs("r-2", "charge")).isEqualTo(2);
    String derived = repeatableRecord("r-2").derive("charge");
    assertThat(externalCalls.get(derived)).as("both calls carried the same derived key").hasValue(2);
    assertThat(retry.response().bodyAsString()).contains("ch_" + derived);
  }

  @Test
  void workerThatLostItsLeaseDuringARepeatablePhaseIsFencedOutAtTheNextCommit() throws Exception {
    Idem idem = repeatableIdem(new AtomicBoolean());
    duringCharge = () -> {
      try {
        IdempotencyRecord r = repeatableRecord("r-3");
        store.inTransaction(tx -> store.update(tx, r.withLease("other-worker", clock.instant().plus(LEASE),
            clock.instant())));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    };

    assertThatThrownBy(() -> idem.phased(repeatableRequest("r-3"))).isInstanceOf(LeaseLostException.class);

    IdempotencyRecord after = repeatableRecord("r-3");
    assertThat(after.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(after.leaseOwner()).isEqualTo("other-worker");
    assertThat(runs("r-3", "capture")).isEqualTo(1);
  }

  @Test
  void exceptionInTheFirstPhaseFreesTheKey() throws Exception {
    AtomicBoolean failNext = new AtomicBoolean(true);
    Idem idem = idemBuilder().name("first-fails").phased(PhasedOperation.builder("POST /fragile")
        .inTransaction("only", ctx -> {
          if (failNext.getAndSet(false)) {
            throw new IllegalStateException("database hiccup");
          }
          return PhaseResult.respond(StoredResponse.of(200, "ok"));
        }).build()).build();
    IdempotentRequest request = IdempotentRequest.of(scope, Operation.of("POST /fragile"),
        IdempotencyKey.of("f-1"), new byte[0]);

    assertThatThrownBy(() -> idem.phased(request)).hasMessage("database hiccup");
    Optional<IdempotencyRecord> between = store.inTransaction(tx -> store.find(tx, request.recordKey()));
    Execution retry = idem.phased(request);

    assertThat(between).isEmpty();
    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
  }

  @Test
  void deterministicFailureIsKeptAsFailedAndReplayed() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Idem idem = idemBuilder().phased(PhasedOperation.builder("POST /declines")
        .inTransaction("create", ctx -> PhaseResult.next(Checkpoint.empty().with("amount", "100")))
        .outside("charge", ctx -> {
          calls.incrementAndGet();
          return PhaseResult.respond(StoredResponse.json(402, "{\"code\":\"PAYMENT.declined\"}"));
        }).build()).build();
    IdempotentRequest request = IdempotentRequest.of(scope, Operation.of("POST /declines"),
        IdempotencyKey.of("d-1"), "{}".getBytes(StandardCharsets.UTF_8));

    Execution first = idem.phased(request);
    Execution replay = idem.phased(request);

    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().status()).isEqualTo(402);
    assertThat(calls).hasValue(1);
    Optional<IdempotencyRecord> stored = store.inTransaction(tx -> store.find(tx, request.recordKey()));
    assertThat(stored.orElseThrow().state()).isEqualTo(RecordState.FAILED);
  }

  @Test
  void retryAfterTheLeaseExpiredTakesOverAndResumes() throws Exception {
    Idem idem = idem();
    duringCharge = () -> {
      throw new Crash();
    };
    try {
      idem.phased(request("p-6", "{\"amount\":100}"));
    } catch (Crash expected) {
      // the worker "dies" during the external call; its release is what a crash would skip, so undo it below
    }
    forceLeaseHeld("p-6");
    clock.advance(LEASE.plusSeconds(1));

    Execution retry = idem.phased(request("p-6", "{\"amount\":100}"));

    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(events).contains("lease expired");
    assertThat(runs("p-6", "create")).isEqualTo(1);
    assertThat(externalCalls.get(derived("p-6"))).hasValue(1);
  }

  @Test
  void workerWhoseLeaseExpiredIsFencedOutByTheWorkerThatTookOver() throws Exception {
    Idem idem = idem();
    Execution[] takeover = new Execution[1];
    duringCharge = () -> {
      clock.advance(LEASE.plusSeconds(5));
      takeover[0] = idem.phased(request("p-7", "{\"amount\":100}"));
    };

    assertThatThrownBy(() -> idem.phased(request("p-7", "{\"amount\":100}")))
        .isInstanceOf(LeaseLostException.class);

    assertThat(takeover[0].outcome()).isEqualTo(Outcome.STORED);
    IdempotencyRecord stored = record("p-7");
    assertThat(stored.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(stored.response()).isEqualTo(takeover[0].response());
    assertThat(idem.phased(request("p-7", "{\"amount\":100}")).response()).isEqualTo(takeover[0].response());
  }

  @Test
  void completerResumesExpiredRecordsFromTheirRecoveryPoint() throws Exception {
    Idem idem = idem();
    for (int i = 0; i < 3; i++) {
      duringCharge = () -> {
        throw new Crash();
      };
      try {
        idem.phased(request("c-" + i, "{\"amount\":" + i + "}"));
      } catch (Crash expected) {
        // simulated crash
      }
      forceLeaseHeld("c-" + i);
    }
    clock.advance(LEASE.plusSeconds(1));
    Completer completer = idem.completer().batchSize(1000).build();

    Completer.Round round = completer.runOnce();
    Execution replay = idem.phased(request("c-1", "{\"amount\":1}"));

    assertThat(round.recovered()).isGreaterThanOrEqualTo(3);
    for (int i = 0; i < 3; i++) {
      assertThat(record("c-" + i).state()).isEqualTo(RecordState.COMPLETED);
      assertThat(runs("c-" + i, "create")).isEqualTo(1);
    }
    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().bodyAsString()).contains("ch_" + derived("c-1"));
    assertThat(events).contains("completer recovered");
  }

  @Test
  void twoCompletersRunningAtOnceRecoverEachRecordExactlyOnce() throws Exception {
    Idem idem = idem();
    int records = 20;
    for (int i = 0; i < records; i++) {
      duringCharge = () -> {
        throw new Crash();
      };
      try {
        idem.phased(request("cc-" + i, "{\"n\":" + i + "}"));
      } catch (Crash expected) {
        // simulated crash
      }
      forceLeaseHeld("cc-" + i);
    }
    clock.advance(LEASE.plusSeconds(1));
    Completer first = idem.completer().batchSize(1000).build();
    Completer second = idem.completer().batchSize(1000).build();
    java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);

    java.util.concurrent.Future<Completer.Round> a = pool.submit(() -> {
      start.await();
      return first.runOnce();
    });
    java.util.concurrent.Future<Completer.Round> b = pool.submit(() -> {
      start.await();
      return second.runOnce();
    });
    Completer.Round ra = a.get(60, java.util.concurrent.TimeUnit.SECONDS);
    Completer.Round rb = b.get(60, java.util.concurrent.TimeUnit.SECONDS);
    pool.shutdown();

    for (int i = 0; i < records; i++) {
      assertThat(record("cc-" + i).state()).isEqualTo(RecordState.COMPLETED);
      assertThat(runs("cc-" + i, "capture")).as("capture of cc-%d", i).isEqualTo(1);
      assertThat(externalCalls.get(derived("cc-" + i))).as("charge of cc-%d", i).hasValue(1);
    }
    assertThat(ra.found() + rb.found()).isGreaterThanOrEqualTo(records);
    assertThat(first.recoveredTotal() + second.recoveredTotal()).isGreaterThanOrEqualTo(records);
  }

  @Test
  void completerNeverTouchesRecordsOfOperationsItCannotResume() throws Exception {
    Idem idem = idem();
    IdempotentRequest leased = IdempotentRequest.of(scope, Operation.of("POST /leased"),
        IdempotencyKey.of("l-crash"), new byte[0]);
    IdempotencyRecord claimed = IdempotencyRecord.claimed(leased.recordKey(), Fingerprint.ofHash(HASH),
        "dead-worker", clock.instant(), LEASE, Duration.ofHours(1));
    store.inTransaction(tx -> store.insert(tx, claimed));
    clock.advance(LEASE.plusSeconds(1));

    idem.completer().batchSize(1000).build().runOnce();
    Optional<IdempotencyRecord> afterCompleter = store.inTransaction(tx -> store.find(tx, leased.recordKey()));
    Execution retry = idem.leased(IdempotentRequest.withFingerprint(leased.recordKey(), Fingerprint.ofHash(HASH)),
        key -> StoredResponse.of(200, "done by the retry"));

    assertThat(afterCompleter).contains(claimed);
    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(events).contains("lease expired");
  }

  @Test
  void completerFreesTheKeyOfAWorkerThatDiedBeforeItsFirstPhaseCommitted() throws Exception {
    Idem idem = idem();
    RecordKey key = new RecordKey(scope, Operation.of(PAYMENTS), IdempotencyKey.of("died-early"));
    IdempotencyRecord claimed = IdempotencyRecord.claimed(key, Fingerprint.ofHash(HASH), "dead-worker",
        clock.instant(), LEASE, Duration.ofHours(1));
    store.inTransaction(tx -> store.insert(tx, claimed));
    clock.advance(LEASE.plusSeconds(1));

    Completer.Round round = idem.completer().batchSize(1000).build().runOnce();
    Optional<IdempotencyRecord> after = store.inTransaction(tx -> store.find(tx, key));
    Execution retry = idem.phased(request("died-early", "{\"amount\":3}"));

    assertThat(round.released()).isGreaterThanOrEqualTo(1);
    assertThat(after).isEmpty();
    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(runs("died-early", "create")).isEqualTo(1);
  }

  @Test
  void firstPhaseMustRunInATransaction() {
    assertThatThrownBy(() -> PhasedOperation.builder("POST /x")
        .outside("charge", ctx -> PhaseResult.respond(StoredResponse.of(200, "x"))).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the first phase of POST /x ('charge') must run inTransaction");
  }

  @Test
  void recordWhoseResumptionFailsWaitsALeaseSoTheOthersGetTheirTurn() throws Exception {
    AtomicBoolean poisonFails = new AtomicBoolean(true);
    Operation poisonous = Operation.of("POST /poison-" + UUID.randomUUID());
    // only this operation: the completer would also resume other tests' POST /payments records in a shared table,
    // whose leases end once this test's clock has moved past them
    Idem idem = Idem.builder().name("poison").store(store).clock(clock).listener(recordingListener())
        .sleeper(d -> clock.advance(d)).phased(PhasedOperation.builder(poisonous)
        .inTransaction("create", ctx -> PhaseResult.next(Checkpoint.empty().with("k", ctx.key().value())))
        .inTransaction("finish", ctx -> {
          if (ctx.key().value().equals("poison") && poisonFails.get()) {
            throw new IllegalStateException("cannot finish " + ctx.key());
          }
          return PhaseResult.respond(StoredResponse.of(200, ctx.key().value()));
        }).build()).build();
    for (String key : List.of("poison", "healthy")) {
      RecordKey rk = new RecordKey(scope, poisonous, IdempotencyKey.of(key));
      IdempotencyRecord atCreate = IdempotencyRecord.claimed(rk, Fingerprint.ofHash(HASH), "dead-worker",
          clock.instant(), LEASE, Duration.ofHours(1))
          .withRecoveryPoint("create", Checkpoint.empty().with("k", key), clock.instant().plus(LEASE), clock.instant());
      store.inTransaction(tx -> store.insert(tx, atCreate));
      clock.advance(Duration.ofMillis(5));
    }
    clock.advance(LEASE.plusSeconds(1));
    Completer completer = idem.completer().batchSize(1).build();

    Completer.Round first = completer.runOnce();
    Completer.Round second = completer.runOnce();

    assertThat(first.failed()).isEqualTo(1);
    assertThat(second.recovered()).isEqualTo(1);
    RecordKey poison = new RecordKey(scope, poisonous, IdempotencyKey.of("poison"));
    IdempotencyRecord waiting = store.inTransaction(tx -> store.find(tx, poison)).orElseThrow();
    assertThat(waiting.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(waiting.lockedUntil()).isEqualTo(clock.instant().plus(LEASE));
    assertThat(events).contains("completer failed", "completer recovered");
  }

  @Test
  void aRecordPastItsRetentionCountsAsAbsent() throws Exception {
    Idem idem = idem();
    idem.phased(request("p-exp", "{\"amount\":1}"));
    clock.advance(Duration.ofHours(1).plus(OperationPolicy.ofDefaults().retention()).plusSeconds(1));

    Execution again = idem.phased(request("p-exp", "{\"amount\":1}"));

    assertThat(again.outcome()).isEqualTo(Outcome.STORED);
    assertThat(runs("p-exp", "create")).isEqualTo(2);
  }

  @Test
  void withoutARetentionAnExpiredRecordCountsAsAbsent() throws Exception {
    Idem idem = idemBuilder().policy(PAYMENTS,
        OperationPolicy.builder().lease(LEASE).ttl(Duration.ofHours(1)).retention(Duration.ZERO).build()).build();
    idem.phased(request("p-exp0", "{\"amount\":1}"));
    clock.advance(Duration.ofHours(1).plusSeconds(1));

    Execution again = idem.phased(request("p-exp0", "{\"amount\":2}"));

    assertThat(again.outcome()).isEqualTo(Outcome.STORED);
    assertThat(runs("p-exp0", "create")).isEqualTo(2);
  }

  // ------------------------------------------------------------------ retention: a retry after the TTL

  @Test
  void phasedRetryAfterTheTtlWithinTheRetentionIsRefusedAsExpiredAndAnotherRequestIsStillAMismatch()
      throws Exception {
    Idem idem = idem();
    idem.phased(request("p-late", "{\"amount\":1}"));
    String charged = derived("p-late");
    IdempotencyRecord first = record("p-late");
    clock.advance(Duration.ofHours(1));

    Execution late = idem.phased(request("p-late", "{\"amount\":1}"));
    Execution other = idem.phased(request("p-late", "{\"amount\":2}"));
    clock.advance(Duration.ofDays(29));
    Execution later = idem.phased(request("p-late", "{\"amount\":1}"));

    assertThat(late.outcome()).isEqualTo(Outcome.KEY_EXPIRED);
    assertThat(late.expiredAt()).isEqualTo(first.expiresAt());
    assertThat(late.response()).isNull();
    assertThatThrownBy(late::responseOrThrow).isInstanceOf(KeyExpiredException.class)
        .hasMessageContaining("Use a new key");
    assertThat(other.outcome()).isEqualTo(Outcome.PAYLOAD_MISMATCH);
    assertThat(other.differingFields()).containsExactly("amount");
    assertThat(later.outcome()).isEqualTo(Outcome.KEY_EXPIRED);
    assertThat(List.of(runs("p-late", "create"), runs("p-late", "charge"), runs("p-late", "capture")))
        .containsExactly(1, 1, 1);
    assertThat(externalCalls.get(charged)).hasValue(1);
    assertThat(record("p-late")).isEqualTo(first);
    assertThat(events).contains("execution KEY_EXPIRED");
  }

  @Test
  void aTombstoneThatPurgeAlreadyShrankStillRefusesTheKey() throws Exception {
    Idem idem = idem();
    idem.phased(request("p-shrunk", "{\"amount\":1}"));
    clock.advance(Duration.ofHours(2));
    IdempotencyRecord tombstone = record("p-shrunk").tombstone(clock.instant());
    store.inTransaction(tx -> store.update(tx, tombstone));

    Execution same = idem.phased(request("p-shrunk", "{\"amount\":1}"));
    Execution other = idem.phased(request("p-shrunk", "{\"amount\":2}"));

    assertThat(same.outcome()).isEqualTo(Outcome.KEY_EXPIRED);
    assertThat(other.outcome()).isEqualTo(Outcome.PAYLOAD_MISMATCH);
    assertThat(runs("p-shrunk", "create")).isEqualTo(1);
  }

  @Test
  void aTombstoneMadeByAPurgeOnAClockAheadIsRefusedNotReplayedEmpty() throws Exception {
    Idem idem = idem();
    idem.phased(request("p-skew", "{\"amount\":1}"));
    IdempotencyRecord written = record("p-skew");
    IdempotencyRecord tombstone = written.tombstone(written.expiresAt().plusSeconds(1));
    store.inTransaction(tx -> store.update(tx, tombstone));
    clock.set(written.expiresAt().minusSeconds(1));

    Execution retry = idem.phased(request("p-skew", "{\"amount\":1}"));

    assertThat(retry.outcome()).isEqualTo(Outcome.KEY_EXPIRED);
    assertThat(runs("p-skew", "create")).isEqualTo(1);
  }

  @Test
  void leasedRetryAfterTheTtlWithinTheRetentionIsRefusedAsExpired() throws Exception {
    Idem idem = idem();
    IdempotentRequest request = leasedRequest("l-late");
    AtomicInteger calls = new AtomicInteger();
    idem.leased(request, key -> StoredResponse.json(201, "{\"call\":" + calls.incrementAndGet() + "}"));
    clock.advance(Duration.ofHours(24).plusSeconds(1));

    Execution late = idem.leased(request, key -> StoredResponse.json(201, "{\"call\":" + calls.incrementAndGet()
        + "}"));
    clock.advance(OperationPolicy.ofDefaults().retention());
    Execution pastRetention = idem.leased(request, key -> StoredResponse.json(201, "{\"call\":"
        + calls.incrementAndGet() + "}"));

    assertThat(late.outcome()).isEqualTo(Outcome.KEY_EXPIRED);
    assertThat(pastRetention.outcome()).isEqualTo(Outcome.STORED);
    assertThat(calls).hasValue(2);
  }

  @Test
  void aClaimTakenOverJustBeforeItsTtlIsNotFreedWhileTheTakeoverHoldsItsLease() throws Exception {
    Operation leased = Operation.of("POST /leased");
    Idem idem = idemBuilder().policy(leased, OperationPolicy.builder().lease(LEASE).ttl(Duration.ofHours(1))
        .build()).build();
    IdempotentRequest request = IdempotentRequest.withFingerprint(leasedRequest("l-near-ttl").recordKey(),
        Fingerprint.ofHash(HASH));
    // worker A claimed at T0 and died without a word
    IdempotencyRecord claimed = IdempotencyRecord.claimed(request.recordKey(), Fingerprint.ofHash(HASH),
        "dead-worker", clock.instant(), LEASE, Duration.ofHours(1), OperationPolicy.ofDefaults().retention());
    store.inTransaction(tx -> store.insert(tx, claimed));
    clock.set(claimed.expiresAt().minusSeconds(10));
    AtomicInteger calls = new AtomicInteger();
    Execution[] late = new Execution[1];
    List<Optional<IdempotencyRecord>> afterPurge = new CopyOnWriteArrayList<>();

    // retry B takes over 10 s before the TTL, under a 30 s lease; while it works the TTL passes, retry C comes and
    // the purge runs
    Execution taken = idem.leased(request, key -> {
      calls.incrementAndGet();
      clock.set(claimed.expiresAt().plusSeconds(1));
      late[0] = idem.leased(request, k -> StoredResponse.of(201, "run again " + calls.incrementAndGet()));
      while (store.purgeExpired(clock.instant(), 1000) > 0) {
        // drain
      }
      afterPurge.add(store.inTransaction(tx -> store.find(tx, request.recordKey())));
      return StoredResponse.of(201, "done by B");
    });

    assertThat(late[0].outcome()).isEqualTo(Outcome.IN_PROGRESS);
    assertThat(calls).as("runs of the work").hasValue(1);
    assertThat(afterPurge.get(0)).as("the record after a purge past the TTL").isPresent();
    assertThat(afterPurge.get(0).get().leaseOwner()).isNotEqualTo("dead-worker");
    assertThat(taken.outcome()).isEqualTo(Outcome.STORED);
    assertThat(events).contains("lease expired");
  }

  // ------------------------------------------------------------------ permanent refusals

  private static final String REFUSED = "{\"code\":\"PROVIDER.idempotency_key_reused\",\"retryable\":false}";

  /**
   * create (reserves) -> charge (refused for good while {@code refuse} is set) -> capture; the release step records
   * what it gave back, and throws while {@code releaseFails} is set.
   */
  private Idem refusingIdem(Operation operation, AtomicBoolean refuse, List<String> released,
      AtomicBoolean releaseFails) {
    return soleOperationBuilder(operation).phased(refusing(operation, refuse, released, releaseFails)).build();
  }

  /** An Idem for one operation only, so that its completer sees no other records of a shared table. */
  private Idem.Builder soleOperationBuilder(Operation operation) {
    return Idem.builder().name("sole").store(store).clock(clock).listener(recordingListener())
        .sleeper(d -> clock.advance(d))
        .policy(operation, OperationPolicy.builder().lease(LEASE).ttl(Duration.ofHours(1)).build());
  }

  private PhasedOperation refusing(Operation operation, AtomicBoolean refuse, List<String> released,
      AtomicBoolean releaseFails) {
    return PhasedOperation.builder(operation)
        .inTransaction("create", ctx -> PhaseResult.next(Checkpoint.empty().with("reserved", "pay_" + ctx.key())))
        .outside("charge", ctx -> {
          ran(ctx.key().value(), "charge");
          duringChargeOnce();
          if (refuse.get()) {
            return PhaseResult.refuse(StoredResponse.json(422, REFUSED));
          }
          return PhaseResult.next(ctx.checkpoint().with("charge_id", "ch_" + ctx.derivedKey("charge")));
        })
        .inTransaction("capture", ctx -> PhaseResult.respond(StoredResponse.of(201, "captured")))
        .onRefusal(ctx -> {
          ctx.transaction();
          if (releaseFails.get()) {
            throw new IllegalStateException("release failed");
          }
          released.add(ctx.checkpoint().require("reserved"));
        })
        .build();
  }

  @Test
  void permanentRefusalEndsTheRecordFailedAfterTheReleaseStepAndIsReplayed() throws Exception {
    Operation operation = Operation.of("POST /refused");
    List<String> released = new CopyOnWriteArrayList<>();
    Idem idem = refusingIdem(operation, new AtomicBoolean(true), released, new AtomicBoolean());
    IdempotentRequest request = IdempotentRequest.of(scope, operation, IdempotencyKey.of("ref-1"),
        "{\"amount\":1}".getBytes(StandardCharsets.UTF_8));

    Execution refused = idem.phased(request);
    Execution again = idem.phased(request);
    IdempotencyRecord stored = store.inTransaction(tx -> store.find(tx, request.recordKey())).orElseThrow();

    assertThat(refused.outcome()).isEqualTo(Outcome.STORED);
    assertThat(refused.response().status()).isEqualTo(422);
    assertThat(stored.state()).isEqualTo(RecordState.FAILED);
    assertThat(stored.response().bodyAsString()).isEqualTo(REFUSED);
    assertThat(stored.lockedUntil()).isNull();
    assertThat(released).as("the release step ran once, with the committed checkpoint").containsExactly("pay_ref-1");
    assertThat(again.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(again.response()).isEqualTo(refused.response());
    assertThat(runs("ref-1", "charge")).as("the refused call is never made again").isEqualTo(1);
    assertThat(events).contains("transition IN_PROGRESS -> FAILED");
  }

  @Test
  void refusalIsKeptEvenWhenTheKeepPolicyWouldNotKeepItsStatus() throws Exception {
    Operation operation = Operation.of("POST /refused-unkept");
    List<String> released = new CopyOnWriteArrayList<>();
    Idem strict = soleOperationBuilder(operation)
        .policy(operation, OperationPolicy.builder().lease(LEASE).ttl(Duration.ofHours(1))
            .keep(KeepPolicy.builder().neverKeep(422).build()).build())
        .phased(refusing(operation, new AtomicBoolean(true), released, new AtomicBoolean())).build();
    IdempotentRequest request = IdempotentRequest.of(scope, operation, IdempotencyKey.of("ref-2"), new byte[0]);

    Execution refused = strict.phased(request);

    assertThat(refused.outcome()).isEqualTo(Outcome.STORED);
    assertThat(record(request).state()).isEqualTo(RecordState.FAILED);
    assertThat(released).containsExactly("pay_ref-2");
  }

  @Test
  void refusalMetByTheCompleterEndsTheRecordAndNoLaterRoundTouchesIt() throws Exception {
    Operation operation = Operation.of("POST /refused-resumed");
    AtomicBoolean refuse = new AtomicBoolean();
    List<String> released = new CopyOnWriteArrayList<>();
    Idem idem = refusingIdem(operation, refuse, released, new AtomicBoolean());
    IdempotentRequest request = IdempotentRequest.of(scope, operation, IdempotencyKey.of("ref-3"), new byte[0]);
    duringCharge = () -> {
      throw new Crash();
    };
    try {
      idem.phased(request);
    } catch (Crash expected) {
      // simulated crash
    }
    IdempotencyRecord crashed = record(request);
    store.inTransaction(tx -> store.update(tx,
        crashed.withLease("dead-worker", clock.instant().plus(LEASE), clock.instant())));
    clock.advance(LEASE.plusSeconds(1));
    refuse.set(true);
    Completer completer = idem.completer().batchSize(1000).build();

    Completer.Round first = completer.runOnce();
    IdempotencyRecord ended = record(request);
    clock.advance(LEASE.multipliedBy(10));
    Completer.Round later = completer.runOnce();

    assertThat(first.recovered()).isEqualTo(1);
    assertThat(ended.state()).isEqualTo(RecordState.FAILED);
    assertThat(released).containsExactly("pay_ref-3");
    assertThat(later.found()).as("a refused record is final: no completer finds it again").isZero();
    assertThat(record(request)).isEqualTo(ended);
    assertThat(runs("ref-3", "charge")).isEqualTo(2);
    assertThat(idem.phased(request).outcome()).isEqualTo(Outcome.REPLAYED);
  }

  @Test
  void releaseStepThatFailsLeavesTheRecordAtItsRecoveryPoint() throws Exception {
    Operation operation = Operation.of("POST /refused-release-fails");
    AtomicBoolean releaseFails = new AtomicBoolean(true);
    List<String> released = new CopyOnWriteArrayList<>();
    Idem idem = refusingIdem(operation, new AtomicBoolean(true), released, releaseFails);
    IdempotentRequest request = IdempotentRequest.of(scope, operation, IdempotencyKey.of("ref-4"), new byte[0]);

    assertThatThrownBy(() -> idem.phased(request)).hasMessageContaining("release failed");
    IdempotencyRecord between = record(request);
    releaseFails.set(false);
    Execution retry = idem.phased(request);

    assertThat(between.state()).as("no FAILED record without its release").isEqualTo(RecordState.IN_PROGRESS);
    assertThat(between.recoveryPoint()).isEqualTo("create");
    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(record(request).state()).isEqualTo(RecordState.FAILED);
    assertThat(released).containsExactly("pay_ref-4");
  }

  @Test
  void aRefusalIsAClientError() {
    assertThatThrownBy(() -> PhaseResult.refuse(StoredResponse.of(503, "down")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("4xx");
    assertThat(PhaseResult.refuse(StoredResponse.of(422, "no")).isRefusal()).isTrue();
    assertThat(PhaseResult.respond(StoredResponse.of(422, "no")).isRefusal()).isFalse();
  }

  private IdempotencyRecord record(IdempotentRequest request) throws Exception {
    return store.inTransaction(tx -> store.find(tx, request.recordKey())).orElse(null);
  }

  // ------------------------------------------------------------------ derived keys

  @Test
  void derivedKeysCarryTheRecordsOwnNonceAndAreTheSameOnEveryResume() throws Exception {
    Operation operation = Operation.of("POST /derived");
    List<String> seen = new CopyOnWriteArrayList<>();
    AtomicInteger failures = new AtomicInteger(2);
    Idem idem = soleOperationBuilder(operation).phased(PhasedOperation.builder(operation)
            .inTransaction("create", ctx -> PhaseResult.next(Checkpoint.empty().with("k", ctx.key().value())))
            .outside("charge", ctx -> {
              seen.add(ctx.key().value() + "=" + ctx.derivedKey("charge"));
              if (failures.getAndDecrement() == 2) {
                throw new Crash();
              }
              if (failures.get() >= 0) {
                throw new IllegalStateException("provider down");
              }
              return PhaseResult.next(ctx.checkpoint());
            })
            .inTransaction("capture", ctx -> PhaseResult.respond(StoredResponse.of(201, ctx.derivedKey("charge"))))
            .build()).build();
    IdempotentRequest request = IdempotentRequest.of(scope, operation, IdempotencyKey.of("dk-1"), new byte[0]);
    try {
      idem.phased(request);
    } catch (Crash expected) {
      // simulated crash: the lease is still held
    }
    IdempotencyRecord crashed = store.inTransaction(tx -> store.find(tx, request.recordKey())).orElseThrow();
    store.inTransaction(tx -> store.update(tx,
        crashed.withLease("dead-worker", clock.instant().plus(LEASE), clock.instant())));
    clock.advance(LEASE.plusSeconds(1));

    Completer.Round resumed = idem.completer().batchSize(1000).build().runOnce();
    clock.advance(LEASE.plusSeconds(1));
    Execution takenOver = idem.phased(request);
    Execution other = idem.phased(IdempotentRequest.of(scope, operation, IdempotencyKey.of("dk-2"), new byte[0]));
    clock.advance(Duration.ofHours(2).plus(OperationPolicy.ofDefaults().retention()));
    Execution afterExpiry = idem.phased(request);

    String first = seen.get(0).substring("dk-1=".length());
    assertThat(resumed.failed()).as("the completer ran the charge, which failed").isEqualTo(1);
    assertThat(takenOver.outcome()).isEqualTo(Outcome.STORED);
    assertThat(seen.subList(0, 3)).as("first run, completer, takeover: one derived key")
        .containsOnly("dk-1=" + first);
    assertThat(takenOver.response().bodyAsString()).isEqualTo(first);
    assertThat(first).isEqualTo(crashed.derive("charge")).startsWith("dk-1:charge:")
        .hasSize("dk-1:charge:".length() + 24);
    assertThat(crashed.keyNonce()).hasSize(IdempotencyRecord.KEY_NONCE_LENGTH);
    assertThat(first).as("not computable from the scope, operation and key")
        .isNotEqualTo(request.recordKey().derive("charge"));
    assertThat(other.response().bodyAsString()).as("another record").isNotEqualTo(first);
    assertThat(afterExpiry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(afterExpiry.response().bodyAsString()).as("a new record for the same key after its retention")
        .isNotEqualTo(first);
  }

  @Test
  void aRecordFromBeforeNoncesKeepsTheOldDerivationWhenResumed() throws Exception {
    Idem idem = idem();
    RecordKey key = new RecordKey(scope, Operation.of(PAYMENTS), IdempotencyKey.of("pre-upgrade"));
    IdempotencyRecord old = new IdempotencyRecord(key, RecordState.IN_PROGRESS, Fingerprint.ofHash(HASH), null,
        "create", Checkpoint.empty().with("payment_id", "pay_old").with("body", "{}"), "old-worker",
        clock.instant().plus(LEASE), 1, clock.instant(), clock.instant(), clock.instant().plus(Duration.ofHours(1)));
    store.inTransaction(tx -> store.insert(tx, old));
    clock.advance(LEASE.plusSeconds(1));

    Completer.Round round = idem.completer().batchSize(1000).build().runOnce();

    assertThat(round.recovered()).isGreaterThanOrEqualTo(1);
    assertThat(externalCalls.get(key.derive("charge"))).as("the charge carried the old derived key").hasValue(1);
    assertThat(record("pre-upgrade").state()).isEqualTo(RecordState.COMPLETED);
    assertThat(record("pre-upgrade").response().bodyAsString()).contains("ch_" + key.derive("charge"));
  }

  // ------------------------------------------------------------------ leased

  @Test
  void leasedStoresReplaysAndReleasesTransientAnswers() throws Exception {
    Idem idem = idem();
    IdempotentRequest request = leasedRequest("l-1");
    AtomicInteger calls = new AtomicInteger();

    Execution transientAnswer = idem.leased(request, key -> {
      calls.incrementAndGet();
      return StoredResponse.of(429, "slow down");
    });
    Execution first = idem.leased(request, key -> {
      calls.incrementAndGet();
      return StoredResponse.json(201, "{\"id\":" + calls.get() + "}");
    });
    Execution replay = idem.leased(request, key -> {
      calls.incrementAndGet();
      return StoredResponse.json(201, "{\"id\":\"never\"}");
    });

    assertThat(transientAnswer.outcome()).isEqualTo(Outcome.NOT_STORED);
    assertThat(first.outcome()).isEqualTo(Outcome.STORED);
    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().bodyAsString()).isEqualTo("{\"id\":2}");
    assertThat(calls).hasValue(2);
    assertThat(events).contains("transition null -> IN_PROGRESS", "transition IN_PROGRESS -> COMPLETED");
  }

  @Test
  void leasedExceptionFreesTheKey() throws Exception {
    Idem idem = idem();
    IdempotentRequest request = IdempotentRequest.of(scope, Operation.of("POST /leased"),
        IdempotencyKey.of("l-2"), new byte[0]);

    assertThatThrownBy(() -> idem.leased(request, key -> {
      throw new java.io.IOException("connection reset");
    })).hasRootCauseMessage("connection reset");
    Execution retry = idem.leased(request, key -> StoredResponse.of(200, "ok"));

    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
  }

  // ------------------------------------------------------------------ uncertain records

  /** The provider of the uncertain tests: down (every call throws) or up; counts calls that took effect per key. */
  protected final AtomicBoolean providerDown = new AtomicBoolean();

  /** create (in a transaction) -> charge (outside: fails while the provider is down) -> capture (respond 201). */
  protected PhasedOperation.Builder chargingOperation(Operation operation) {
    return PhasedOperation.builder(operation)
        .inTransaction("create", ctx -> PhaseResult.next(Checkpoint.empty().with("payment_id", "pay_" + ctx.key())))
        .outside("charge", ctx -> {
          ran(ctx.key().value(), "charge");
          if (providerDown.get()) {
            throw new IllegalStateException("provider unreachable");
          }
          externalCalls.computeIfAbsent(ctx.derivedKey("charge"), k -> new AtomicInteger()).incrementAndGet();
          return PhaseResult.next(ctx.checkpoint().with("charge_id", "ch_" + ctx.derivedKey("charge")));
        })
        .inTransaction("capture", ctx -> PhaseResult.respond(StoredResponse.json(201,
            "{\"id\":\"" + ctx.checkpoint().require("payment_id") + "\",\"status\":\"succeeded\"}")));
  }

  /** An Idem for one fresh operation only, with the given resume cap, the charging phases and the reconciler. */
  protected Idem cappedIdem(Operation operation, int attempts, Duration maxAge, Reconciler reconciler) {
    PhasedOperation.Builder phases = chargingOperation(operation);
    if (reconciler != null) {
      phases.reconciler(reconciler);
    }
    return soleOperationBuilder(operation)
        .policy(operation, OperationPolicy.builder().lease(LEASE).ttl(Duration.ofHours(1))
            .resumeCap(attempts, maxAge).build())
        .phased(phases.build()).build();
  }

  protected IdempotentRequest chargeRequest(Operation operation, String key, String body) {
    return IdempotentRequest.of(scope, operation, IdempotencyKey.of(key), body.getBytes(StandardCharsets.UTF_8));
  }

  /** Runs the request while the provider is down until its record is uncertain; returns how many runs it took. */
  protected int driveToUncertain(Idem idem, IdempotentRequest request) throws Exception {
    providerDown.set(true);
    for (int run = 1; run <= 1000; run++) {
      try {
        idem.phased(request);
      } catch (IllegalStateException expected) {
        // the provider is down
      }
      if (record(request).state() == RecordState.UNCERTAIN) {
        return run;
      }
    }
    throw new AssertionError("never became uncertain");
  }

  protected static Operation freshOperation() {
    return Operation.of("POST /uncertain-" + UUID.randomUUID());
  }

  @Test
  void aRecordWhoseResumptionsKeepFailingBecomesUncertainAtTheAttemptCapAndNothingRunsAfter() throws Exception {
    Operation operation = freshOperation();
    Idem idem = cappedIdem(operation, 3, Duration.ofHours(24), null);
    IdempotentRequest request = chargeRequest(operation, "cap-1", "{\"amount\":100}");

    int runs = driveToUncertain(idem, request);
    IdempotencyRecord uncertain = record(request);
    providerDown.set(false);
    Execution duplicate = idem.phased(request);
    Execution other = idem.phased(chargeRequest(operation, "cap-1", "{\"amount\":999}"));

    assertThat(runs).isEqualTo(3);
    assertThat(uncertain.resumeAttempts()).isEqualTo(3);
    assertThat(uncertain.recoveryPoint()).isEqualTo("create");
    assertThat(uncertain.checkpoint().values()).containsEntry("payment_id", "pay_cap-1");
    assertThat(uncertain.keyNonce()).isNotNull();
    assertThat(uncertain.leaseOwner()).isNull();
    assertThat(uncertain.lockedUntil()).isNull();
    assertThat(duplicate.outcome()).isEqualTo(Outcome.UNCERTAIN);
    assertThat(duplicate.expiredAt()).isEqualTo(uncertain.updatedAt());
    assertThatThrownBy(duplicate::responseOrThrow).isInstanceOf(OutcomeUncertainException.class)
        .hasMessageContaining("cap-1");
    assertThat(other.outcome()).isEqualTo(Outcome.PAYLOAD_MISMATCH);
    assertThat(runs("cap-1", "charge")).as("nothing runs once uncertain").isEqualTo(3);
    assertThat(record(request)).isEqualTo(uncertain);
    assertThat(events).contains("transition IN_PROGRESS -> UNCERTAIN", "execution UNCERTAIN", "uncertain cap-1");
  }

  @Test
  void aRecordBecomesUncertainAtTheAgeCapThroughTheCompleterWhichNeverTouchesItAgain() throws Exception {
    Operation operation = freshOperation();
    Idem idem = cappedIdem(operation, 1000, Duration.ofMinutes(10), null);
    IdempotentRequest request = chargeRequest(operation, "age-1", "{}");
    providerDown.set(true);
    assertThatThrownBy(() -> idem.phased(request)).hasMessageContaining("provider unreachable");
    Completer completer = idem.completer().batchSize(1000).build();

    Completer.Round young = completer.runOnce();
    IdempotencyRecord afterYoung = record(request);
    clock.advance(Duration.ofMinutes(11));
    Completer.Round old = completer.runOnce();
    IdempotencyRecord afterOld = record(request);
    clock.advance(LEASE.multipliedBy(10));
    Completer.Round later = completer.runOnce();

    assertThat(young.failed()).isEqualTo(1);
    assertThat(afterYoung.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(afterYoung.resumeAttempts()).isEqualTo(2);
    assertThat(old.failed()).isEqualTo(1);
    assertThat(afterOld.state()).isEqualTo(RecordState.UNCERTAIN);
    assertThat(afterOld.resumeAttempts()).isEqualTo(3);
    assertThat(later.found()).isZero();
    assertThat(record(request)).isEqualTo(afterOld);
  }

  @Test
  void aPhaseThatSucceedsBeforeTheCapFinishesTheRecordAsUsual() throws Exception {
    Operation operation = freshOperation();
    Idem idem = cappedIdem(operation, 3, Duration.ofHours(24), null);
    IdempotentRequest request = chargeRequest(operation, "cap-ok", "{}");
    providerDown.set(true);
    assertThatThrownBy(() -> idem.phased(request)).hasMessageContaining("provider unreachable");
    assertThatThrownBy(() -> idem.phased(request)).hasMessageContaining("provider unreachable");
    providerDown.set(false);

    Execution third = idem.phased(request);

    assertThat(third.outcome()).isEqualTo(Outcome.STORED);
    assertThat(record(request).state()).isEqualTo(RecordState.COMPLETED);
    assertThat(record(request).resumeAttempts()).isEqualTo(2);
  }

  @Test
  void aReconcilerThatFindsTheChargeCompletesTheRecordByItsDerivedKeyAndTheAuditSaysSo() throws Exception {
    Operation operation = freshOperation();
    List<String> askedFor = new CopyOnWriteArrayList<>();
    Idem idem = cappedIdem(operation, 2, Duration.ofHours(24), record -> {
      askedFor.add(record.derive("charge"));
      return Reconciler.Verdict.completed(StoredResponse.json(201, "{\"id\":\""
          + record.checkpoint().require("payment_id") + "\",\"status\":\"succeeded\",\"reconciled\":true}"));
    });
    IdempotentRequest request = chargeRequest(operation, "rec-1", "{}");
    driveToUncertain(idem, request);
    IdempotencyRecord uncertain = record(request);

    Completer.Reconciliation round = idem.completer().batchSize(10).build().reconcileOnce();
    Execution replay = idem.phased(request);

    assertThat(round).isEqualTo(new Completer.Reconciliation(1, 1, 0, 0, 0, 0));
    assertThat(askedFor).containsExactly(uncertain.derive("charge"));
    assertThat(record(request).state()).isEqualTo(RecordState.COMPLETED);
    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(new String(replay.response().body(), StandardCharsets.UTF_8)).contains("\"reconciled\":true");
    assertThat(idem.history(uncertain.key())).singleElement().satisfies(e -> {
      assertThat(e.actor()).isEqualTo("reconciler 'sole'");
      assertThat(e.from()).isEqualTo(RecordState.UNCERTAIN);
      assertThat(e.to()).isEqualTo(RecordState.COMPLETED);
    });
    assertThat(events).contains("transition UNCERTAIN -> COMPLETED", "reconciled COMPLETED true");
  }

  @Test
  void aReconcilerThatFindsNoChargeFailsTheRecordAndOneThatCannotTellLeavesIt() throws Exception {
    Operation operation = freshOperation();
    AtomicBoolean known = new AtomicBoolean();
    AtomicBoolean throwing = new AtomicBoolean(true);
    Idem idem = cappedIdem(operation, 1, Duration.ofHours(24), record -> {
      if (throwing.getAndSet(false)) {
        throw new java.io.IOException("look-up timed out");
      }
      return known.get() ? Reconciler.Verdict.failed(StoredResponse.json(402, "{\"code\":\"PAYMENT.declined\"}"))
          : Reconciler.Verdict.unknown();
    });
    IdempotentRequest request = chargeRequest(operation, "rec-2", "{}");
    driveToUncertain(idem, request);
    Completer completer = idem.completer().batchSize(10).build();

    Completer.Reconciliation threw = completer.reconcileOnce();
    Completer.Reconciliation unknown = completer.reconcileOnce();
    RecordState between = record(request).state();
    known.set(true);
    Completer.Reconciliation failed = completer.reconcileOnce();

    assertThat(threw.unknown()).isEqualTo(1);
    assertThat(unknown.unknown()).isEqualTo(1);
    assertThat(between).isEqualTo(RecordState.UNCERTAIN);
    assertThat(failed.failed()).isEqualTo(1);
    assertThat(record(request).state()).isEqualTo(RecordState.FAILED);
    assertThat(idem.phased(request).response().status()).isEqualTo(402);
    assertThat(idem.history(request.recordKey())).hasSize(1);
  }

  @Test
  void aReconcilerThatSaysResumeSendsTheRecordBackToWorkAndTheCompleterFinishesItWithItsOwnPhases()
      throws Exception {
    Operation operation = freshOperation();
    Idem idem = cappedIdem(operation, 2, Duration.ofHours(24), record -> Reconciler.Verdict.resume());
    IdempotentRequest request = chargeRequest(operation, "rec-resume", "{}");
    driveToUncertain(idem, request);
    providerDown.set(false);
    Completer completer = idem.completer().batchSize(10).build();

    Completer.Reconciliation reconciled = completer.reconcileOnce();
    IdempotencyRecord backToWork = record(request);
    Completer.Round round = completer.runOnce();

    assertThat(reconciled.resumed()).isEqualTo(1);
    assertThat(backToWork.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(backToWork.resumeAttempts()).isZero();
    assertThat(round.recovered()).isEqualTo(1);
    assertThat(record(request).state()).isEqualTo(RecordState.COMPLETED);
    assertThat(externalCalls).containsOnlyKeys(backToWork.derive("charge"));
    assertThat(idem.history(request.recordKey())).singleElement()
        .satisfies(e -> assertThat(e.action()).isEqualTo(Resolution.Action.RETRY));
  }

  @Test
  void twoNodesReconcilingTheSameRecordsDecideEachExactlyOnce() throws Exception {
    for (int iteration = 0; iteration < 5; iteration++) {
      Operation operation = freshOperation();
      AtomicInteger asked = new AtomicInteger();
      Reconciler reconciler = record -> {
        asked.incrementAndGet();
        return Reconciler.Verdict.completed(StoredResponse.of(200, record.key().key().value()));
      };
      Idem nodeA = cappedIdem(operation, 1, Duration.ofHours(24), reconciler);
      Idem nodeB = cappedIdem(operation, 1, Duration.ofHours(24), reconciler);
      int records = 12;
      for (int i = 0; i < records; i++) {
        driveToUncertain(nodeA, chargeRequest(operation, "race-" + i, "{}"));
      }
      CyclicBarrier start = new CyclicBarrier(2);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        Future<Completer.Reconciliation> a = pool.submit(() -> {
          start.await(10, TimeUnit.SECONDS);
          return nodeA.completer().batchSize(100).build().reconcileOnce();
        });
        Future<Completer.Reconciliation> b = pool.submit(() -> {
          start.await(10, TimeUnit.SECONDS);
          return nodeB.completer().batchSize(100).build().reconcileOnce();
        });
        Completer.Reconciliation ra = a.get(60, TimeUnit.SECONDS);
        Completer.Reconciliation rb = b.get(60, TimeUnit.SECONDS);

        assertThat(ra.completed() + rb.completed()).isEqualTo(records);
        assertThat(ra.completed() + rb.completed() + ra.skipped() + rb.skipped()).isEqualTo(asked.get());
        for (int i = 0; i < records; i++) {
          RecordKey key = new RecordKey(scope, operation, IdempotencyKey.of("race-" + i));
          assertThat(nodeA.history(key)).as("audit of %s", key).hasSize(1);
          assertThat(record(chargeRequest(operation, "race-" + i, "{}")).state()).isEqualTo(RecordState.COMPLETED);
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  @Test
  void anOperatorCompletesFailsOrRetriesUncertainRecordsAndEachResolutionIsAudited() throws Exception {
    Operation operation = freshOperation();
    Idem idem = cappedIdem(operation, 1, Duration.ofHours(24), null);
    IdempotentRequest toComplete = chargeRequest(operation, "op-complete", "{}");
    IdempotentRequest toFail = chargeRequest(operation, "op-fail", "{}");
    IdempotentRequest toRetry = chargeRequest(operation, "op-retry", "{}");
    for (IdempotentRequest r : List.of(toComplete, toFail, toRetry)) {
      driveToUncertain(idem, r);
    }
    providerDown.set(false);
    Instant at = clock.instant();

    Optional<AuditEntry> completed = idem.resolve(toComplete.recordKey(), Resolution.complete(
        StoredResponse.json(201, "{\"status\":\"succeeded\"}"), "alice", "the provider's dashboard shows it", at));
    Optional<AuditEntry> failed = idem.resolve(toFail.recordKey(), Resolution.fail(
        StoredResponse.json(402, "{\"status\":\"declined\"}"), "alice", "no charge at the provider", at));
    Optional<AuditEntry> retried = idem.resolve(toRetry.recordKey(), Resolution.retry("bob", "provider back", at));
    Optional<AuditEntry> twice = idem.resolve(toComplete.recordKey(), Resolution.retry("bob", "again", at));
    IdempotencyRecord backToWork = record(toRetry);
    Completer.Round round = idem.completer().batchSize(100).build().runOnce();

    assertThat(completed).hasValueSatisfying(e -> assertThat(e.to()).isEqualTo(RecordState.COMPLETED));
    assertThat(failed).hasValueSatisfying(e -> assertThat(e.to()).isEqualTo(RecordState.FAILED));
    assertThat(retried).hasValueSatisfying(e -> assertThat(e.to()).isEqualTo(RecordState.IN_PROGRESS));
    assertThat(twice).as("a record that is no longer uncertain is not resolved again").isEmpty();
    assertThat(idem.phased(toComplete).outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(idem.phased(toFail).response().status()).isEqualTo(402);
    assertThat(backToWork.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(backToWork.resumeAttempts()).isZero();
    assertThat(round.recovered()).isEqualTo(1);
    assertThat(record(toRetry).state()).isEqualTo(RecordState.COMPLETED);
    assertThat(externalCalls).containsOnlyKeys(backToWork.derive("charge"));
    assertThat(idem.history(toComplete.recordKey())).singleElement()
        .satisfies(e -> assertThat(e.actor()).isEqualTo("alice"));
    assertThat(events).contains("resolved alice COMPLETE", "resolved alice FAIL", "resolved bob RETRY");
  }

  @Test
  void theResumeCapIsValidated() {
    assertThatThrownBy(() -> OperationPolicy.builder().resumeCap(0, Duration.ofHours(1)))
        .hasMessageContaining("resumeCap attempts must be 1..1000, got 0");
    assertThatThrownBy(() -> OperationPolicy.builder().resumeCap(3, Duration.ZERO))
        .hasMessageContaining("resumeCap maxAge must be positive");
    assertThat(OperationPolicy.ofDefaults().resumeCapAttempts()).isEqualTo(10);
    assertThat(OperationPolicy.ofDefaults().resumeCapAge()).isEqualTo(Duration.ofHours(24));
  }

  // ------------------------------------------------------------------ lock timeouts in the claim

  @Test
  void leasedClaimWhoseInsertTimesOutOnALockIsInProgressAndRunsNothing() throws Exception {
    FaultInjectingStore faulty = new FaultInjectingStore(store)
        .failNext(FaultInjectingStore.Call.INSERT, FaultInjectingStore.lockTimeout());
    Idem idem = idemBuilder().store(faulty).build();
    IdempotentRequest request = leasedRequest("l-lock-insert");
    AtomicInteger calls = new AtomicInteger();

    Execution timedOut = idem.leased(request, key -> StoredResponse.of(201, "run " + calls.incrementAndGet()));
    Execution retry = idem.leased(request, key -> StoredResponse.of(201, "run " + calls.incrementAndGet()));

    assertThat(timedOut.outcome()).isEqualTo(Outcome.IN_PROGRESS);
    assertThat(timedOut.retryAfter()).isEqualTo(Duration.ofSeconds(1));
    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(calls).hasValue(1);
  }

  @Test
  void takeoverWhoseUpdateTimesOutOnALockIsInProgressAndRunsNothing() throws Exception {
    IdempotentRequest request = IdempotentRequest.withFingerprint(leasedRequest("l-lock-takeover").recordKey(),
        Fingerprint.ofHash(HASH));
    IdempotencyRecord claimed = IdempotencyRecord.claimed(request.recordKey(), Fingerprint.ofHash(HASH),
        "dead-worker", clock.instant(), LEASE, Duration.ofHours(1));
    store.inTransaction(tx -> store.insert(tx, claimed));
    clock.advance(LEASE.plusSeconds(1));
    FaultInjectingStore faulty = new FaultInjectingStore(store)
        .failNext(FaultInjectingStore.Call.UPDATE, FaultInjectingStore.lockTimeout());
    Idem idem = idemBuilder().store(faulty).build();
    AtomicInteger calls = new AtomicInteger();

    Execution timedOut = idem.leased(request, key -> StoredResponse.of(201, "run " + calls.incrementAndGet()));
    Optional<IdempotencyRecord> after = store.inTransaction(tx -> store.find(tx, request.recordKey()));

    assertThat(timedOut.outcome()).isEqualTo(Outcome.IN_PROGRESS);
    assertThat(after).contains(claimed);
    assertThat(calls).hasValue(0);
  }

  @Test
  void claimFailureOtherThanALockTimeoutStillFails() throws Exception {
    FaultInjectingStore faulty = new FaultInjectingStore(store)
        .failNext(FaultInjectingStore.Call.INSERT, FaultInjectingStore.broken());
    Idem idem = idemBuilder().store(faulty).build();

    assertThatThrownBy(() -> idem.leased(leasedRequest("l-broken"), key -> StoredResponse.of(201, "x")))
        .isInstanceOf(StoreException.class);
  }

  // ------------------------------------------------------------------ answers over maxResponseBytes

  private static final String BIG = "x".repeat(65);

  private Idem idemWithLimit64(PhasedOperation... operations) {
    OperationPolicy small = OperationPolicy.builder().lease(LEASE).maxResponseBytes(64).build();
    Idem.Builder b = idemBuilder().policy("POST /leased", small);
    for (PhasedOperation op : operations) {
      b.policy(op.operation().name(), small).phased(op);
    }
    return b.build();
  }

  private IdempotencyRecord recordOf(RecordKey key) throws Exception {
    return store.inTransaction(tx -> store.find(tx, key)).orElse(null);
  }

  @Test
  void leasedAnswerOverTheLimitKeepsASubstituteSoTheWorkNeverRunsTwice() throws Exception {
    Idem idem = idemWithLimit64();
    IdempotentRequest request = leasedRequest("l-big");
    AtomicInteger calls = new AtomicInteger();

    assertThatThrownBy(() -> idem.leased(request, key -> {
      calls.incrementAndGet();
      return StoredResponse.of(201, BIG);
    })).isInstanceOfSatisfying(ResponseTooLargeException.class, e -> {
      assertThat(e.kept()).contains(ResponseTooLargeException.substitute(64));
      assertThat(e).hasMessageContaining("65 bytes; the limit is 64").hasMessageContaining("the work was applied");
    });
    Execution retry = idem.leased(request, key -> {
      calls.incrementAndGet();
      return StoredResponse.of(201, BIG);
    });

    assertThat(calls).hasValue(1);
    assertThat(retry.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(retry.response()).isEqualTo(ResponseTooLargeException.substitute(64));
    assertThat(retry.response().status()).isEqualTo(500);
    assertThat(retry.response().bodyAsString()).contains("INTERNAL.response_too_large")
        .contains("the request was applied").contains("\"retryable\":false");
    assertThat(recordOf(request.recordKey()).state()).isEqualTo(RecordState.FAILED);
  }

  @Test
  void leasedWorkThatReportsItsAnswerTooLargeIsKeptAsApplied() throws Exception {
    Idem idem = idemWithLimit64();
    IdempotentRequest request = leasedRequest("l-big-thrown");
    AtomicInteger calls = new AtomicInteger();

    assertThatThrownBy(() -> idem.leased(request, key -> {
      calls.incrementAndGet();
      throw new ResponseTooLargeException(request.recordKey(), 65, 64);
    })).isInstanceOfSatisfying(ResponseTooLargeException.class, e -> assertThat(e.kept()).isPresent());
    Execution retry = idem.leased(request, key -> StoredResponse.of(201, "ran again"));

    assertThat(calls).hasValue(1);
    assertThat(retry.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(retry.response()).isEqualTo(ResponseTooLargeException.substitute(64));
  }

  @Test
  void leasedAnswerOverTheLimitThatIsNotKeptStillFreesTheKey() throws Exception {
    Idem idem = idemWithLimit64();
    IdempotentRequest request = leasedRequest("l-big-503");

    Execution first = idem.leased(request, key -> StoredResponse.of(503, BIG));

    assertThat(first.outcome()).isEqualTo(Outcome.NOT_STORED);
    assertThat(recordOf(request.recordKey())).isNull();
  }

  @Test
  void outsidePhaseAnswerOverTheLimitKeepsASubstituteAndTheCallIsNotRepeated() throws Exception {
    AtomicInteger outsideCalls = new AtomicInteger();
    PhasedOperation op = PhasedOperation.builder("POST /big-outside")
        .inTransaction("create", ctx -> PhaseResult.next(Checkpoint.empty().with("id", "1")))
        .outside("charge", ctx -> {
          outsideCalls.incrementAndGet();
          return PhaseResult.respond(StoredResponse.of(201, BIG));
        })
        .build();
    Idem idem = idemWithLimit64(op);
    IdempotentRequest request = IdempotentRequest.of(scope, op.operation(), IdempotencyKey.of("p-big-outside"),
        "{}".getBytes(StandardCharsets.UTF_8));

    assertThatThrownBy(() -> idem.phased(request)).isInstanceOfSatisfying(ResponseTooLargeException.class,
        e -> assertThat(e.kept()).contains(ResponseTooLargeException.substitute(64)));
    Execution retry = idem.phased(request);

    assertThat(outsideCalls).hasValue(1);
    assertThat(retry.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(retry.response()).isEqualTo(ResponseTooLargeException.substitute(64));
    assertThat(recordOf(request.recordKey()).state()).isEqualTo(RecordState.FAILED);
  }

  @Test
  void lastTransactionalPhaseOverTheLimitRollsBackAndTheRecordStaysAtItsRecoveryPoint() throws Exception {
    AtomicInteger outsideCalls = new AtomicInteger();
    AtomicInteger captures = new AtomicInteger();
    PhasedOperation op = PhasedOperation.builder("POST /big-capture")
        .inTransaction("create", ctx -> PhaseResult.next(Checkpoint.empty().with("id", "1")))
        .outside("charge", ctx -> {
          outsideCalls.incrementAndGet();
          return PhaseResult.next(ctx.checkpoint().with("charge", "ch"));
        })
        .inTransaction("capture", ctx -> {
          captures.incrementAndGet();
          return PhaseResult.respond(StoredResponse.of(201, BIG));
        })
        .build();
    Idem idem = idemWithLimit64(op);
    IdempotentRequest request = IdempotentRequest.of(scope, op.operation(), IdempotencyKey.of("p-big-capture"),
        "{}".getBytes(StandardCharsets.UTF_8));

    assertThatThrownBy(() -> idem.phased(request)).isInstanceOfSatisfying(ResponseTooLargeException.class, e -> {
      assertThat(e.kept()).isEmpty();
      assertThat(e.recoveryPoint()).contains("charge");
    });
    IdempotencyRecord after = recordOf(request.recordKey());
    assertThatThrownBy(() -> idem.phased(request)).isInstanceOfSatisfying(ResponseTooLargeException.class,
        e -> assertThat(e.recoveryPoint()).contains("charge"));

    assertThat(after.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(after.recoveryPoint()).isEqualTo("charge");
    assertThat(outsideCalls).hasValue(1);
    assertThat(captures).hasValue(2);
  }

  @Test
  void firstPhaseAnswerOverTheLimitLeavesNothing() throws Exception {
    PhasedOperation op = PhasedOperation.builder("POST /big-first")
        .inTransaction("create", ctx -> PhaseResult.respond(StoredResponse.of(201, BIG)))
        .build();
    Idem idem = idemWithLimit64(op);
    IdempotentRequest request = IdempotentRequest.of(scope, op.operation(), IdempotencyKey.of("p-big-first"),
        "{}".getBytes(StandardCharsets.UTF_8));

    assertThatThrownBy(() -> idem.phased(request)).isInstanceOfSatisfying(ResponseTooLargeException.class, e -> {
      assertThat(e.kept()).isEmpty();
      assertThat(e.recoveryPoint()).isEmpty();
      assertThat(e).hasMessageContaining("nothing was applied");
    });

    assertThat(recordOf(request.recordKey())).isNull();
  }

  /** Stands for a process dying mid-phase. */
  protected static final class Crash extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Crash() {
      super("simulated crash");
    }
  }

  /**
   * A crash skips the release that an exception triggers; put the record back under a live lease, at its recovery
   * point, as a killed process would have left it.
   */
  protected void forceLeaseHeld(String key) throws Exception {
    IdempotencyRecord r = record(key);
    IdempotencyRecord held = r.withLease("dead-worker", clock.instant().plus(LEASE), clock.instant());
    store.inTransaction(tx -> store.update(tx, held));
  }
}
