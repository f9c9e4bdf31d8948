package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.RecordKey;
import dev.idem.core.StoredResponse;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A PostgreSQL backend ended under a statement, as a restart, a failover or {@code pg_terminate_backend} ends it
 * (SQLState 57P01, admin shutdown): the failure is transient, so that the executor retries on a new connection and
 * the request survives it.
 */
class PostgresTerminatedBackendTest {

  @Test
  void aStatementWhoseBackendIsTerminatedFailsTransiently() throws Exception {
    long lock = ThreadLocalRandom.current().nextLong();
    try (Connection victim = connect(); Connection other = Databases.pool(JdbcDialect.POSTGRESQL).getConnection()) {
      int pid = pid(victim);
      other.setAutoCommit(false);
      try (PreparedStatement ps = other.prepareStatement("SELECT pg_advisory_xact_lock(?)")) {
        ps.setLong(1, lock);
        ps.execute();
      }
      CompletableFuture<SQLException> waiting = CompletableFuture.supplyAsync(() -> catchThrowableOfType(() -> {
        try (PreparedStatement ps = victim.prepareStatement("SELECT pg_advisory_lock(?)")) {
          ps.setLong(1, lock);
          ps.execute();
        }
      }, SQLException.class));
      awaitLockWait(other, pid);
      try (PreparedStatement ps = other.prepareStatement("SELECT pg_terminate_backend(?)")) {
        ps.setInt(1, pid);
        ps.execute();
      }
      other.rollback();

      SQLException e = waiting.get();

      assertThat((Throwable) e).isNotNull();
      assertThat(e.getSQLState()).isEqualTo("57P01");
      assertThat(SqlErrors.isTransient(JdbcDialect.POSTGRESQL, e)).isTrue();
      assertThat(SqlErrors.wrap("orders", JdbcDialect.POSTGRESQL, "find", e).isTransient()).isTrue();
    }
  }

  @Test
  void anAtomicRequestWhoseBackendIsTerminatedRunsOnANewConnection() throws Exception {
    Databases.store(JdbcDialect.POSTGRESQL);
    Terminating dataSource = new Terminating(Databases.pool(JdbcDialect.POSTGRESQL));
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).name("terminated")
        .dialect(JdbcDialect.POSTGRESQL).build();
    Idem idem = Idem.builder().name("terminated").store(store).build();
    String scope = "terminated-" + UUID.randomUUID();
    IdempotentRequest request = IdempotentRequest.of(RecordKey.of(scope, "POST /payments", "k-1"),
        "{\"amount\":1}".getBytes(StandardCharsets.UTF_8), "application/json");
    AtomicInteger runs = new AtomicInteger();
    dataSource.terminateNext.set(true);

    Execution execution = idem.atomic(request, tx -> {
      runs.incrementAndGet();
      Databases.insertEffect(JdbcTransaction.connectionOf(tx), scope);
      return StoredResponse.json(201, "{\"id\":\"pay_1\"}");
    });

    // 57P01 when pgjdbc reads the server's notice first (what happens here), 08006 if its write meets the closed
    // socket before: both are transient, and either way the request must end stored with one effect
    assertThat(dataSource.failures).as("the store's statement met the ended backend").isNotEmpty()
        .allMatch(state -> state.equals("57P01") || state.startsWith("08"));
    assertThat(execution.outcome()).isEqualTo(Execution.Outcome.STORED);
    assertThat(runs).hasValue(1);
    assertThat(Databases.countEffects(JdbcDialect.POSTGRESQL, scope)).isEqualTo(1);
  }

  /**
   * Connections of a pool; when {@link #terminateNext} is set, the backend of the next connection is ended (by
   * {@code pg_terminate_backend} on another connection, which waits until it is gone) as its first statement is
   * prepared. Keeps the SQLStates its statements fail with.
   */
  static final class Terminating extends WrappingDataSource {
    final AtomicBoolean terminateNext = new AtomicBoolean();
    final List<String> failures = new CopyOnWriteArrayList<>();

    Terminating(DataSource real) {
      super(real);
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection c = real.getConnection();
      boolean terminate = terminateNext.getAndSet(false);
      AtomicBoolean prepared = new AtomicBoolean();
      return proxy(Connection.class, c, (method, args) -> {
        if (method.getName().equals("prepareStatement") && !prepared.getAndSet(true) && terminate) {
          terminate(pid(c));
        }
        Object result = invoke(method, c, args);
        return result instanceof PreparedStatement ps ? proxy(PreparedStatement.class, ps, (m, a) -> {
          try {
            return invoke(m, ps, a);
          } catch (SQLException e) {
            failures.add(e.getSQLState());
            throw e;
          }
        }) : result;
      });
    }

    private void terminate(int pid) throws SQLException {
      try (Connection other = real.getConnection();
          PreparedStatement ps = other.prepareStatement("SELECT pg_terminate_backend(?, 30000)")) {
        ps.setInt(1, pid);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getBoolean(1)).as("backend %s ended", pid).isTrue();
        }
      }
    }

    interface Call {
      Object call(Method method, Object[] args) throws Throwable;
    }

    private static <T> T proxy(Class<T> type, T target, Call call) {
      return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
          (p, method, args) -> call.call(method, args)));
    }

    private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }

  @Test
  void theOtherOperatorInterventionsOfAServerGoingAwayAreTransientToo() {
    for (String state : new String[] {"57P01", "57P02", "57P03"}) {
      assertThat(SqlErrors.isTransient(JdbcDialect.POSTGRESQL, new SQLException("server going away", state)))
          .as(state).isTrue();
    }
    assertThat(SqlErrors.isTransient(JdbcDialect.POSTGRESQL, new SQLException("database dropped", "57P04")))
        .isFalse();
  }

  private static Connection connect() throws SQLException {
    return DriverManager.getConnection(Databases.url(JdbcDialect.POSTGRESQL), Databases.user(JdbcDialect.POSTGRESQL),
        "");
  }

  private static int pid(Connection c) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Until the backend waits for a lock (read from the catalog, no guessed delay). */
  private static void awaitLockWait(Connection c, int pid) throws SQLException {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(30));
    try (PreparedStatement ps = c.prepareStatement(
        "SELECT 1 FROM pg_stat_activity WHERE pid = ? AND wait_event_type = 'Lock'")) {
      ps.setInt(1, pid);
      while (true) {
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            return;
          }
        }
        if (Instant.now().isAfter(deadline)) {
          throw new AssertionError("backend " + pid + " never waited for the lock");
        }
      }
    }
  }
}
