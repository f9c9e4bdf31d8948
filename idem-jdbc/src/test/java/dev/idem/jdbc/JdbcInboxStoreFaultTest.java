package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.StoreException;
import dev.idem.outbox.InboxHandlerException;
import dev.idem.outbox.spi.InboxStore.Fault;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransactionRollbackException;
import java.sql.SQLTransientConnectionException;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/** How the JDBC inbox judges whose failure an error is, for the consumers' engine; no database needed. */
class JdbcInboxStoreFaultTest {
  private static final BooleanSupplier ANSWERS = () -> true;
  private static final BooleanSupplier AWAY = () -> false;
  private static final BooleanSupplier NOT_ASKED = () -> {
    throw new AssertionError("the database must not be probed for this failure");
  };

  private static StoreException store(String state, boolean lockTimeout, boolean transientFailure) {
    SQLException cause = new SQLException("from the driver", state);
    return new StoreException("inbox", "committing event e-1 for billing failed", state, lockTimeout,
        transientFailure, cause);
  }

  private static InboxHandlerException handler(Throwable cause) {
    return new InboxHandlerException("billing", "e-1", cause);
  }

  @Test
  void aStoreFailureOfTheInboxIsTheDatabasesUnlessItIsAConflictOrAboutTheHandlersWrites() {
    assertThat(JdbcInboxStore.fault(store("08006", false, true), NOT_ASKED)).isEqualTo(Fault.OUTAGE);
    assertThat(JdbcInboxStore.fault(store(null, false, false), NOT_ASKED)).isEqualTo(Fault.OUTAGE);
    assertThat(JdbcInboxStore.fault(new StoreException("inbox", "no SQL at all", null), NOT_ASKED))
        .isEqualTo(Fault.OUTAGE);
    StoreException missingTable = store("42P01", false, false);
    assertThat(missingTable.isSchemaFault()).isTrue();
    assertThat(JdbcInboxStore.fault(missingTable, NOT_ASKED)).isEqualTo(Fault.OUTAGE);
    assertThat(JdbcInboxStore.fault(store("25006", false, false), NOT_ASKED)).isEqualTo(Fault.OUTAGE);
    assertThat(JdbcInboxStore.fault(store("40001", false, true), NOT_ASKED)).isEqualTo(Fault.CONTENTION);
    assertThat(JdbcInboxStore.fault(store("40P01", false, true), NOT_ASKED)).isEqualTo(Fault.CONTENTION);
    assertThat(JdbcInboxStore.fault(store("55P03", true, true), NOT_ASKED)).isEqualTo(Fault.CONTENTION);
    assertThat(JdbcInboxStore.fault(store("HY000", true, true), NOT_ASKED)).isEqualTo(Fault.CONTENTION);
    // a deferred constraint fails at COMMIT, after the handler returned: the handler's writes, counted
    assertThat(JdbcInboxStore.fault(store("23505", false, false), NOT_ASKED)).isEqualTo(Fault.OTHER);
    assertThat(JdbcInboxStore.fault(store("22001", false, false), NOT_ASKED)).isEqualTo(Fault.OTHER);
    // a schema fault refuses every message alike: never counted against one
    assertThat(JdbcInboxStore.fault(store("42703", false, false), NOT_ASKED)).isEqualTo(Fault.OUTAGE);
    // raised by the database about the transaction's content (the handler's writes flushed at the commit: a trigger's
    // exception, MariaDB's SIGNAL, a program limit): the message's while the database answers
    for (String raised : new String[] {"P0001", "45000", "54000"}) {
      assertThat(JdbcInboxStore.fault(store(raised, false, false), ANSWERS)).as(raised).isEqualTo(Fault.OTHER);
      assertThat(JdbcInboxStore.fault(store(raised, false, false), AWAY)).as(raised).isEqualTo(Fault.OUTAGE);
    }
    SQLException mariaDeadlock = new SQLException("Deadlock found", "HY000", 1213);
    assertThat(JdbcInboxStore.fault(new StoreException("inbox", "insert failed", null, false, true, mariaDeadlock),
        NOT_ASKED)).isEqualTo(Fault.CONTENTION);
  }

  @Test
  void theHandlersSqlFailureIsTheDatabasesOnlyWhenItRefusesEveryoneOrDoesNotAnswer() {
    assertThat(JdbcInboxStore.fault(handler(new SQLException("read-only transaction", "25006")), NOT_ASKED))
        .isEqualTo(Fault.OUTAGE);
    assertThat(JdbcInboxStore.fault(handler(new SQLException("too many connections", "53300")), NOT_ASKED))
        .isEqualTo(Fault.OUTAGE);
    assertThat(JdbcInboxStore.fault(handler(new SQLException("read only", "HY000", 1290)), NOT_ASKED))
        .isEqualTo(Fault.OUTAGE);
    assertThat(JdbcInboxStore.fault(handler(new SQLException("password failed", "28P01")), NOT_ASKED))
        .isEqualTo(Fault.OUTAGE);
    assertThat(JdbcInboxStore.fault(handler(new SQLException("serialization", "40001")), NOT_ASKED))
        .isEqualTo(Fault.CONTENTION);
    assertThat(JdbcInboxStore.fault(handler(new SQLException("lock wait timeout", "HY000", 1205)), NOT_ASKED))
        .isEqualTo(Fault.CONTENTION);
    assertThat(JdbcInboxStore.fault(handler(new SQLTransactionRollbackException("rolled back")), NOT_ASKED))
        .isEqualTo(Fault.CONTENTION);
    assertThat(JdbcInboxStore.fault(handler(new SQLTimeoutException("statement timeout", "57014")), NOT_ASKED))
        .isEqualTo(Fault.OTHER);
    assertThat(JdbcInboxStore.fault(handler(new SQLException("syntax error", "42601")), NOT_ASKED))
        .isEqualTo(Fault.OTHER);
    for (SQLException lost : new SQLException[] {new SQLTransientConnectionException("gone", "08006"),
        new SQLNonTransientConnectionException("gone"), new SQLRecoverableException("gone"),
        new SQLException("gone", "08003")}) {
      assertThat(JdbcInboxStore.fault(handler(lost), ANSWERS)).as(lost.toString()).isEqualTo(Fault.OTHER);
      assertThat(JdbcInboxStore.fault(handler(lost), AWAY)).as(lost.toString()).isEqualTo(Fault.OUTAGE);
    }
    // an SQL failure deep in the causes, under the handler's own wrappers, counts alike
    Throwable wrapped = handler(new IllegalStateException("could not book", new RuntimeException(
        new SQLException("read-only", "25006"))));
    assertThat(JdbcInboxStore.fault(wrapped, NOT_ASKED)).isEqualTo(Fault.OUTAGE);
  }

  @Test
  void anythingElseIsTheMessagesOwnFailure() {
    assertThat(JdbcInboxStore.fault(handler(new IllegalArgumentException("bad amount")), NOT_ASKED))
        .isEqualTo(Fault.OTHER);
    assertThat(JdbcInboxStore.fault(new StackOverflowError(), NOT_ASKED)).isEqualTo(Fault.OTHER);
    RuntimeException selfCaused = new RuntimeException() {
      @Override
      public synchronized Throwable getCause() {
        return this;
      }
    };
    assertThat(JdbcInboxStore.fault(selfCaused, NOT_ASKED)).isEqualTo(Fault.OTHER);
  }
}
