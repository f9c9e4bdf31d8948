package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idem.core.Checkpoint;
import dev.idem.core.Codec;
import dev.idem.core.ConfigurationException;
import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.PhaseResult;
import dev.idem.core.PhasedOperation;
import dev.idem.core.RecordKey;
import dev.idem.core.StoreException;
import dev.idem.core.StoredResponse;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Running on the caller's connection, and what a failing statement tells the caller (PostgreSQL). */
class CallerConnectionAndErrorsTest {
  private final JdbcIdempotencyStore store = Databases.store(JdbcDialect.POSTGRESQL);
  private final Idem idem = Idem.builder().name("caller").store(store).build();
  private final String scope = "caller-" + UUID.randomUUID();

  private IdempotentRequest request(String key) {
    return IdempotentRequest.of(RecordKey.of(scope, "POST /payments", key), "{}".getBytes(), "application/json");
  }

  /**
   * Pays on the bound {@code expected}: as it is when its transaction was open already (the caller's), through the
   * view that refuses to end the transaction when it was in auto-commit mode (the store's own transaction).
   */
  private Execution pay(String key, Connection expected) throws SQLException {
    boolean storesOwn = expected.getAutoCommit();
    return idem.atomic(request(key), tx -> {
      Connection c = JdbcTransaction.connectionOf(tx);
      if (storesOwn) {
        assertThat(c).isNotSameAs(expected);
        assertThat(c.unwrap(Connection.class)).isSameAs(c);
        assertThatThrownBy(c::commit).isInstanceOf(IllegalStateException.class);
        try (Statement st = c.createStatement()) {
          assertThat(st.getConnection()).isSameAs(expected);
        }
      } else {
        assertThat(c).isSameAs(expected);
      }
      Databases.insertEffect(c, scope + "/" + key);
      return StoredResponse.json(201, "{}");
    });
  }

  @Test
  void boundAutoCommitConnectionRunsAndCommitsEachExecution() throws Exception {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection();
        var binding = store.useConnection(c)) {

      Execution e = pay("auto-1", c);

      assertThat(e.outcome()).isEqualTo(Execution.Outcome.STORED);
      assertThat(c.getAutoCommit()).as("auto-commit is restored").isTrue();
    }
    assertThat(Databases.countEffects(JdbcDialect.POSTGRESQL, scope + "/auto-1")).isEqualTo(1);
  }

  @Test
  void callersOpenTransactionIsJoinedAndTheCallerDecidesTheCommit() throws Exception {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      c.setAutoCommit(false);
      try (var binding = store.useConnection(c)) {

        Execution stored = pay("join-1", c);
        Execution notKept = idem.atomic(request("join-2"), tx -> {
          Databases.insertEffect(JdbcTransaction.connectionOf(tx), scope + "/join-2");
          return StoredResponse.json(503, "{}");
        });
        c.rollback();

        assertThat(stored.outcome()).isEqualTo(Execution.Outcome.STORED);
        assertThat(notKept.outcome()).isEqualTo(Execution.Outcome.NOT_STORED);
      } finally {
        c.setAutoCommit(true);
      }
    }
    assertThat(Databases.countEffects(JdbcDialect.POSTGRESQL, scope + "/join-1"))
        .as("the caller rolled its transaction back, record and effect with it").isZero();
    assertThat(store.find(RecordKey.of(scope, "POST /payments", "join-1"))).isEmpty();
  }

  @Test
  void aSuspendedBindingCommitsOnTheStoresOwnConnectionThenBindsTheCallersAgain() throws Exception {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      c.setAutoCommit(false);
      try (var binding = store.useConnection(c)) {
        Execution own;
        try (var suspended = store.suspendConnection()) {
          assertThat(store.boundConnection()).isEmpty();
          assertThat(store.joinsCallerTransaction()).isFalse();
          own = idem.atomic(request("own-1"), tx -> {
            assertThat(JdbcTransaction.connectionOf(tx)).isNotSameAs(c);
            Databases.insertEffect(JdbcTransaction.connectionOf(tx), scope + "/own-1");
            return StoredResponse.json(422, "{}");
          });
        }
        assertThat(store.boundConnection()).containsSame(c);
        Execution joined = pay("own-2", c);
        c.rollback();

        assertThat(own.outcome()).isEqualTo(Execution.Outcome.STORED);
        assertThat(joined.outcome()).isEqualTo(Execution.Outcome.STORED);
      } finally {
        c.setAutoCommit(true);
      }
    }
    assertThat(store.find(RecordKey.of(scope, "POST /payments", "own-1"))).as("committed on its own").isPresent();
    assertThat(Databases.countEffects(JdbcDialect.POSTGRESQL, scope + "/own-1")).isEqualTo(1);
    assertThat(store.find(RecordKey.of(scope, "POST /payments", "own-2"))).as("rolled back with the caller")
        .isEmpty();
    try (var suspended = store.suspendConnection()) {
      assertThat(store.boundConnection()).as("nothing bound: nothing to suspend").isEmpty();
    }
    assertThat(store.boundConnection()).isEmpty();
  }

  @Test
  void leasedAndPhasedExecutionsRefuseToRunInsideTheCallersOpenTransaction() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    Idem phased = Idem.builder().name("caller-phased").store(store)
        .phased(PhasedOperation.builder("POST /payments").inTransaction("reserve", context -> {
          calls.incrementAndGet();
          return PhaseResult.next(Checkpoint.empty());
        }).outside("charge", context -> {
          calls.incrementAndGet();
          return PhaseResult.respond(StoredResponse.json(201, "{}"));
        }).build())
        .build();
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      c.setAutoCommit(false);
      try (var binding = store.useConnection(c)) {
        assertThat(store.joinsCallerTransaction()).isTrue();

        assertThatThrownBy(() -> idem.leased(request("lease-1"), k -> {
          calls.incrementAndGet();
          return StoredResponse.json(201, "{}");
        })).isInstanceOf(ConfigurationException.class).hasMessageContaining("leased mode for POST /payments cannot"
            + " run inside the caller's open transaction").hasMessageContaining("bind an auto-commit connection");
        assertThatThrownBy(() -> idem.call(RecordKey.of(scope, "POST /payments", "lease-2")).fingerprintJson(
            "{}".getBytes()).leased(Codec.utf8(), () -> "charged " + calls.incrementAndGet()))
            .isInstanceOf(ConfigurationException.class);
        assertThatThrownBy(() -> phased.phased(request("phase-1"))).isInstanceOf(ConfigurationException.class)
            .hasMessageContaining("phased mode for POST /payments cannot run inside the caller's open transaction");
        c.commit();
      } finally {
        c.setAutoCommit(true);
      }
    }
    assertThat(calls).as("no work ran").hasValue(0);
    assertThat(store.joinsCallerTransaction()).isFalse();
    for (String key : List.of("lease-1", "lease-2", "phase-1")) {
      assertThat(store.find(RecordKey.of(scope, "POST /payments", key))).isEmpty();
    }
  }

  @Test
  void leasedExecutionRunsWithNothingBoundOrOnABoundAutoCommitConnection() throws Exception {
    Execution alone = idem.leased(request("lease-alone"), k -> StoredResponse.json(201, "{}"));
    Execution onAutoCommit;
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection();
        var binding = store.useConnection(c)) {
      assertThat(store.joinsCallerTransaction()).isFalse();
      onAutoCommit = idem.leased(request("lease-auto"), k -> StoredResponse.json(201, "{}"));
    }
    assertThat(alone.outcome()).isEqualTo(Execution.Outcome.STORED);
    assertThat(onAutoCommit.outcome()).isEqualTo(Execution.Outcome.STORED);
    assertThat(store.find(RecordKey.of(scope, "POST /payments", "lease-auto"))).isPresent();
  }

  @Test
  void joinedTransactionKeepsTheCallersEarlierWritesWhenTheWorkIsNotKept() throws Exception {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      c.setAutoCommit(false);
      try (var binding = store.useConnection(c)) {
        Databases.insertEffect(c, scope + "/before");

        idem.atomic(request("join-3"), tx -> {
          Databases.insertEffect(JdbcTransaction.connectionOf(tx), scope + "/join-3");
          return StoredResponse.json(503, "{}");
        });
        c.commit();
      } finally {
        c.setAutoCommit(true);
      }
    }
    assertThat(Databases.countEffects(JdbcDialect.POSTGRESQL, scope + "/before")).isEqualTo(1);
    assertThat(Databases.countEffects(JdbcDialect.POSTGRESQL, scope + "/join-3"))
        .as("rolled back to the savepoint").isZero();
  }

  @Test
  void transientFailureInsideTheCallersTransactionIsNotRetriedAndLeavesTheCallersWritesAlone() throws Exception {
    dev.idem.test.FaultInjectingStore faulty = new dev.idem.test.FaultInjectingStore(store)
        .failNext(dev.idem.test.FaultInjectingStore.Call.INSERT, dev.idem.test.FaultInjectingStore.deadlock());
    Idem joined = Idem.builder().name("joined").store(faulty).build();
    StoreException thrown;
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      c.setAutoCommit(false);
      try (var binding = store.useConnection(c)) {
        Databases.insertEffect(c, scope + "/mine");

        thrown = catchThrowableOfType(() -> joined.atomic(request("joined-deadlock"), tx -> {
          Databases.insertEffect(JdbcTransaction.connectionOf(tx), scope + "/joined-deadlock");
          return StoredResponse.json(201, "{}");
        }), StoreException.class);
        c.commit();
      } finally {
        c.setAutoCommit(true);
      }
    }

    assertThat(thrown.isTransient()).isFalse();
    assertThat(thrown).hasMessageContaining("not retried here, roll back and retry the whole transaction");
    assertThat(faulty.calls(dev.idem.test.FaultInjectingStore.Call.INSERT)).isEqualTo(1);
    assertThat(Databases.countEffects(JdbcDialect.POSTGRESQL, scope + "/mine")).isEqualTo(1);
    assertThat(Databases.countEffects(JdbcDialect.POSTGRESQL, scope + "/joined-deadlock")).isZero();
  }

  @Test
  void deferredUniqueViolationAtCommitIsTheCallersErrorNotACollision() throws Exception {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection(); var st = c.createStatement()) {
      st.execute("CREATE TABLE IF NOT EXISTS idem_test_deferred (v VARCHAR(200),"
          + " CONSTRAINT idem_test_deferred_v UNIQUE (v) DEFERRABLE INITIALLY DEFERRED)");
    }

    StoreException thrown = catchThrowableOfType(() -> idem.atomic(request("deferred"), tx -> {
      try (var ps = JdbcTransaction.connectionOf(tx).prepareStatement(
          "INSERT INTO idem_test_deferred (v) VALUES (?), (?)")) {
        ps.setString(1, scope);
        ps.setString(2, scope);
        ps.executeUpdate();
      }
      return StoredResponse.json(201, "{}");
    }), StoreException.class);

    assertThat(thrown.sqlState()).isEqualTo("23505");
    assertThat(store.find(RecordKey.of(scope, "POST /payments", "deferred"))).isEmpty();
  }

  @Test
  void failingStatementNamesTheStoreAndKeepsTheSqlState() {
    JdbcIdempotencyStore missing = JdbcIdempotencyStore.builder(Databases.pool(JdbcDialect.POSTGRESQL))
        .name("orders").table("no_such_table").checkSchema(false).build();

    StoreException e = catchThrowableOfType(
        () -> missing.find(RecordKey.of("s", "POST /x", "k")), StoreException.class);

    assertThat(e.getMessage()).startsWith("store 'orders': find s/POST /x/k failed").contains("(SQLState 42P01)");
    assertThat(e.sqlState()).isEqualTo("42P01");
    assertThat(e.storeName()).isEqualTo("orders");
    assertThat(e.isTransient()).isFalse();
  }

  @Test
  void buildFailsFastWhenTheRecordTableIsMissingAndNamesTheTableAndTheSchemaFile() {
    for (JdbcDialect dialect : List.of(JdbcDialect.POSTGRESQL, JdbcDialect.MARIADB, JdbcDialect.H2)) {
      Throwable e = catchThrowableOfType(() -> JdbcIdempotencyStore.builder(Databases.pool(dialect))
          .name("orders").table("no_such_table").build(), IllegalStateException.class);

      assertThat(e).as("%s", dialect).hasMessageContaining("the record table no_such_table is missing")
          .hasMessageContaining("db/idem/").hasMessageContaining("createSchemaIfMissing(true)");
    }
  }

  @Test
  void buildFailsFastWhenTheRecordTableLacksAColumn() throws Exception {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS idem_half_record");
      st.execute("CREATE TABLE idem_half_record (scope VARCHAR(200), operation VARCHAR(200), idem_key VARCHAR(255))");
    }

    Throwable e = catchThrowableOfType(() -> JdbcIdempotencyStore.builder(Databases.pool(JdbcDialect.POSTGRESQL))
        .table("idem_half_record").build(), IllegalStateException.class);

    assertThat(e).hasMessageContaining("idem_half_record is missing, or lacks a column");
  }

  @Test
  void builderRefusesATableNameThatIsNotAnIdentifier() {
    Throwable e = catchThrowableOfType(() -> JdbcIdempotencyStore.builder(Databases.pool(JdbcDialect.POSTGRESQL))
        .table("idem; DROP TABLE x"), IllegalArgumentException.class);

    assertThat(e).hasMessageContaining("table must be an SQL identifier").hasMessageContaining("idem; DROP TABLE x");
  }
}
