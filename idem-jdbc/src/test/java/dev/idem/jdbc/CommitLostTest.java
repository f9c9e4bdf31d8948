package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Execution;
import dev.idem.core.Idem;
import dev.idem.core.IdempotentRequest;
import dev.idem.core.RecordKey;
import dev.idem.core.StoredResponse;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The commit succeeds but its acknowledgement is lost (the connection drops right after): the executor must not run
 * the work again, it must find the committed record and replay it.
 */
class CommitLostTest {

  /** Connections whose next commit commits, then reports a lost connection (SQLState 08006). */
  static final class LosingCommits extends WrappingDataSource {
    final AtomicBoolean loseNext = new AtomicBoolean();
    final AtomicInteger lost = new AtomicInteger();

    LosingCommits(DataSource real) {
      super(real);
    }

    @Override
    public Connection getConnection() throws SQLException {
      Connection c = real.getConnection();
      return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
          (proxy, method, args) -> {
            Object result;
            try {
              result = method.invoke(c, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
            if (method.getName().equals("commit") && loseNext.getAndSet(false)) {
              lost.incrementAndGet();
              throw new SQLException("connection lost after COMMIT was sent", "08006");
            }
            return result;
          });
    }
  }

  @ParameterizedTest
  @EnumSource(JdbcDialect.class)
  void lostCommitAcknowledgementIsAnsweredByReplayNotBySecondExecution(JdbcDialect dialect) throws Exception {
    Databases.store(dialect);
    LosingCommits dataSource = new LosingCommits(Databases.pool(dialect));
    // the separate COMMIT is what gets lost; on PostgreSQL it normally travels with the insert
    JdbcIdempotencyStore store = JdbcIdempotencyStore.builder(dataSource).name("losing").dialect(dialect)
        .commitWithLastRecordWrite(false).build();
    Idem idem = Idem.builder().name("commit-lost").store(store).build();
    String scope = "lost-" + UUID.randomUUID();
    IdempotentRequest request = IdempotentRequest.of(RecordKey.of(scope, "POST /payments", "k-1"),
        "{\"amount\":1}".getBytes(), "application/json");
    AtomicInteger runs = new AtomicInteger();
    dataSource.loseNext.set(true);

    Execution first = idem.atomic(request, tx -> {
      runs.incrementAndGet();
      Databases.insertEffect(JdbcTransaction.connectionOf(tx), scope);
      return StoredResponse.json(201, "{\"id\":\"pay_1\"}");
    });
    Execution again = idem.atomic(request, tx -> StoredResponse.json(201, "{\"id\":\"never\"}"));

    assertThat(dataSource.lost).hasValue(1);
    assertThat(first.outcome()).isEqualTo(Execution.Outcome.REPLAYED);
    assertThat(first.response().bodyAsString()).isEqualTo("{\"id\":\"pay_1\"}");
    assertThat(runs).as("the work ran once").hasValue(1);
    assertThat(Databases.countEffects(dialect, scope)).isEqualTo(1);
    assertThat(again.response()).isEqualTo(first.response());
  }
}
