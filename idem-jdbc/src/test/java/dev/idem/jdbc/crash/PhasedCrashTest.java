package dev.idem.jdbc.crash;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Completer;
import dev.idem.core.Execution;
import dev.idem.core.Execution.Outcome;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.OperationPolicy;
import dev.idem.core.RecordState;
import dev.idem.core.spi.IdempotencyStore;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.jdbc.crash.CrashTables.ExternalCharge;
import dev.idem.jdbc.crash.CrashTables.Payment;
import dev.idem.test.ChildJvm;
import dev.idem.test.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Phased mode under kill -9 (docs/architecture.md, "Execution modes": a retry or the completer resumes). A child JVM
 * runs {@code POST /payments}; its "create" phase commits, its "charge" phase calls the provider with
 * {@code <key>:charge} (committed there), and the child is killed by SIGKILL before that phase's recovery point is
 * committed. This JVM, with a clock past the child's lease, then recovers the payment through the completer or through
 * the client's retry. Extend it with a database.
 */
abstract class PhasedCrashTest {
  /**
   * The child's lease. Long on purpose: the record table is shared, and other tests' completers run with clocks some
   * seconds or minutes ahead; a short lease would let them take over this test's record. This JVM's clock is set past
   * it instead of waiting for it.
   */
  static final Duration CHILD_LEASE = Duration.ofMinutes(10);
  private static final int SIGKILL_EXIT_CODE = 128 + 9;

  private CrashDatabase database;
  private HikariDataSource dataSource;
  private JdbcIdempotencyStore store;
  private IdempotentRequest request;
  private MutableClock clock;

  /** A database the child and this JVM share; called once per test. */
  protected abstract CrashDatabase database();

  @BeforeEach
  void setUp() {
    database = database();
    request = CrashScenarios.request(CrashScenarios.PAYMENTS, "crash-" + UUID.randomUUID(),
        UUID.randomUUID().toString(), CrashScenarios.PAYMENT_BODY);
    clock = MutableClock.startingNow();
    clock.advance(CHILD_LEASE.plusMinutes(1));
  }

  @AfterEach
  void tearDown() throws Exception {
    if (dataSource != null) {
      dataSource.close();
    }
    database.deleteFiles();
  }

  /**
   * Runs the child to its crash point (provider charged, "charge" phase not committed) and kills it; returns its
   * READY line. Only then opens this JVM's pool: an H2 file database admits one process at a time.
   */
  private String killChildAfterTheExternalCharge() throws Exception {
    List<String> args = new ArrayList<>(database.toArgs());
    args.add(request.scope().value());
    args.add(request.key().value());
    args.add(Long.toString(CHILD_LEASE.toSeconds()));
    String ready;
    try (ChildJvm child = ChildJvm.start(PhasedCrashChild.class, args)) {
      ready = child.awaitLine(ChildSignal.READY, ChildJvm.READY_TIMEOUT);
      assertThat(child.kill()).as("exit code of a JVM killed by SIGKILL").isEqualTo(SIGKILL_EXIT_CODE);
    }
    dataSource = database.open("crash-parent");
    store = JdbcIdempotencyStore.builder(dataSource).createSchemaIfMissing(true).build();
    return ready;
  }

  /** This JVM's instance: the same operation and policy as the child's, a clock past the child's lease. */
  private Idem idem(IdempotencyStore idemStore) {
    return Idem.builder().name("crash-parent").store(idemStore).clock(clock)
        .policy(CrashScenarios.PAYMENTS, OperationPolicy.builder().lease(CHILD_LEASE).build())
        .phased(CrashScenarios.payments(dataSource, database.dialect(), key -> {}))
        .build();
  }

  private IdempotencyRecord record() throws Exception {
    return store.inTransaction(tx -> store.find(tx, request.recordKey())).orElseThrow();
  }

  private ExternalCharge externalCharge() throws Exception {
    return CrashTables.externalCharge(dataSource, derivedKey()).orElseThrow();
  }

  /** The charge's derived key: from the record, which carries its key nonce. */
  private String derivedKey() throws Exception {
    return record().derive("charge");
  }

  private List<Payment> payments() throws Exception {
    return CrashTables.paymentsFor(dataSource, request.key().value());
  }

  @Test
  void killAfterTheExternalChargeLeavesTheRecordInProgressAtTheCreatePhase() throws Exception {
    String ready = killChildAfterTheExternalCharge();

    IdempotencyRecord record = record();
    assertThat(ready).isEqualTo(ChildSignal.READY + " " + record.derive("charge"));
    assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(record.recoveryPoint()).isEqualTo("create");
    assertThat(record.checkpoint().get("charge_id")).isNull();
    assertThat(payments()).singleElement().satisfies(p -> {
      assertThat(p.id()).isEqualTo(record.checkpoint().get("payment_id"));
      assertThat(p.status()).isEqualTo("pending");
    });
    assertThat(externalCharge().calls()).isEqualTo(1);
    assertThat(externalCharge().effects()).isEqualTo(1);
  }

  @Test
  void completerFinishesThePaymentOfAKilledWorkerWithoutChargingTwice() throws Exception {
    killChildAfterTheExternalCharge();
    Idem idem = idem(ScopedStore.of(store, request.scope()));
    Completer completer = idem.completer().build();

    Completer.Round round = completer.runOnce();
    Execution replay = idem.phased(request);

    IdempotencyRecord record = record();
    ExternalCharge charge = externalCharge();
    assertThat(round.recovered()).isEqualTo(1);
    assertThat(round.failed()).isZero();
    assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
    assertThat(record.response().status()).isEqualTo(201);
    assertThat(payments()).singleElement().satisfies(p -> {
      assertThat(p.status()).isEqualTo("captured");
      assertThat(p.chargeId()).isEqualTo(charge.chargeId());
    });
    assertThat(charge.effects()).as("effects at the provider").isEqualTo(1);
    assertThat(charge.calls()).as("calls at the provider: the killed one and the completer's").isEqualTo(2);
    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().status()).isEqualTo(201);
    assertThat(replay.response().body()).isEqualTo(record.response().body());
    assertThat(replay.response().bodyAsString()).contains("\"status\":\"captured\"", charge.chargeId());
  }

  @Test
  void clientRetryFinishesThePaymentOfAKilledWorkerWithoutChargingTwice() throws Exception {
    killChildAfterTheExternalCharge();
    Idem idem = idem(store);

    Execution retry = idem.phased(request);
    Execution again = idem.phased(request);

    ExternalCharge charge = externalCharge();
    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(retry.response().status()).isEqualTo(201);
    assertThat(retry.response().bodyAsString()).contains("\"status\":\"captured\"", charge.chargeId());
    assertThat(again.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(again.response().status()).isEqualTo(201);
    assertThat(again.response().headers()).isEqualTo(retry.response().headers());
    assertThat(again.response().body()).isEqualTo(retry.response().body());
    assertThat(payments()).singleElement().extracting(Payment::status).isEqualTo("captured");
    assertThat(charge.effects()).as("effects at the provider").isEqualTo(1);
    assertThat(charge.calls()).as("calls at the provider: the killed one and the retry's").isEqualTo(2);
    assertThat(record().state()).isEqualTo(RecordState.COMPLETED);
  }
}
