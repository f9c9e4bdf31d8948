package dev.idem.jdbc.crash;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.idem.core.Execution;
import dev.idem.core.Execution.Outcome;
import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.RecordState;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.test.ChildJvm;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Atomic mode under kill -9 (docs/architecture.md, "Execution modes": a crash leaves nothing behind). A child JVM runs
 * {@code idem.atomic} with a business insert and is killed by SIGKILL after the insert and before the commit; this
 * JVM then checks what the database kept and retries the key. Extend it with a database server.
 */
abstract class AtomicCrashTest {
  private static final int SIGKILL_EXIT_CODE = 128 + 9;

  private CrashDatabase database;
  private HikariDataSource dataSource;
  private JdbcIdempotencyStore store;
  private IdempotentRequest request;

  /** The database the child and this JVM share. */
  protected abstract CrashDatabase database();

  @BeforeEach
  void setUp() throws Exception {
    database = database();
    dataSource = database.open("crash-parent");
    CrashTables.create(dataSource, database.dialect());
    store = JdbcIdempotencyStore.builder(dataSource).createSchemaIfMissing(true).build();
    request = CrashScenarios.request(CrashScenarios.ATOMIC_OPERATION, "crash-" + UUID.randomUUID(),
        UUID.randomUUID().toString(), CrashScenarios.EFFECT_BODY);
  }

  @AfterEach
  void tearDown() {
    if (dataSource != null) {
      dataSource.close();
    }
  }

  /** Runs the child to its crash point (its insert done, no commit), kills it; returns its READY line. */
  private String killChildBetweenBusinessWriteAndCommit() throws Exception {
    List<String> args = new ArrayList<>(database.toArgs());
    args.add(request.scope().value());
    args.add(request.key().value());
    try (ChildJvm child = ChildJvm.start(AtomicCrashChild.class, args)) {
      String ready = child.awaitLine(ChildSignal.READY, ChildJvm.READY_TIMEOUT);
      assertThat(child.kill()).as("exit code of a JVM killed by SIGKILL").isEqualTo(SIGKILL_EXIT_CODE);
      return ready;
    }
  }

  private Optional<IdempotencyRecord> record() throws Exception {
    return store.inTransaction(tx -> store.find(tx, request.recordKey()));
  }

  private Execution retry(Idem idem) {
    return idem.atomic(request, CrashScenarios.insertEffect(request, rowsSeen -> {}));
  }

  @Test
  void killBetweenTheBusinessWriteAndTheCommitLeavesNeitherRecordNorBusinessRow() throws Exception {
    String ready = killChildBetweenBusinessWriteAndCommit();

    assertThat(ready).as("the child's transaction held its business row when it was killed").isEqualTo("READY 1");
    assertThat(record()).isEmpty();
    assertThat(CrashTables.countEffects(dataSource, CrashScenarios.marker(request))).isZero();
  }

  /**
   * The business row's primary key is the marker, so the retry's insert waits on the row the killed session held
   * until the server has aborted that session (its statement timeout bounds the wait): a lock that outlived the
   * process would fail the retry instead of storing it.
   */
  @Test
  void retryAfterTheKillRunsTheWorkOnceAndTheNextRetryReplaysIt() throws Exception {
    killChildBetweenBusinessWriteAndCommit();
    Idem idem = Idem.builder().name("crash-parent").store(store).build();

    Execution retry = retry(idem);
    Execution replay = retry(idem);

    assertThat(retry.outcome()).isEqualTo(Outcome.STORED);
    assertThat(retry.response().status()).isEqualTo(201);
    assertThat(retry.response().bodyAsString()).contains("\"by\":\"pid-" + ProcessHandle.current().pid() + "\"");
    assertThat(replay.outcome()).isEqualTo(Outcome.REPLAYED);
    assertThat(replay.response().status()).isEqualTo(201);
    assertThat(replay.response().body()).isEqualTo(retry.response().body());
    assertThat(replay.response().headers()).isEqualTo(retry.response().headers());
    assertThat(CrashTables.countEffects(dataSource, CrashScenarios.marker(request))).isEqualTo(1);
    assertThat(record()).get().extracting(IdempotencyRecord::state).isEqualTo(RecordState.COMPLETED);
  }
}
