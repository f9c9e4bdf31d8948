package dev.idem.spring.outbox;

import dev.idem.core.StoreException;
import dev.idem.core.spi.TransactionWork;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.jdbc.SqlErrors;
import dev.idem.outbox.spi.InboxTransactions;
import dev.idem.spring.internal.SpringDataSourceTransactions;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The inbox's transactions in a Spring application: each is a Spring transaction of a
 * {@link PlatformTransactionManager} (propagation {@code REQUIRED}), and the inbox works on its connection of the
 * inbox's {@link DataSource}. So a handler's {@code JdbcTemplate} writes, {@code @Transactional} services and
 * published events join the inbox row's transaction, Spring commits it, and its synchronizations run after that
 * commit: {@code @TransactionalEventListener} {@code AFTER_COMMIT} listeners, the outbox relay's wake-up. The
 * transaction rolls back on anything the work throws, checked exceptions included, or when the work marked it
 * rollback-only; what the work threw reaches the caller as it is, even when the rollback fails too. The database
 * failing to begin or commit the transaction is a {@link StoreException} of the store with the
 * SQLState, as in the store's own transactions, so that a consumer judges it alike (an outage, a conflict). Under a
 * Spring transaction already active on the thread, the work joins it and commits with it. Thread-safe.
 *
 * <pre>{@code
 * JdbcInboxStore store = JdbcInboxStore.builder(dataSource).build();
 * Inbox inbox = Inbox.builder(store).transactions(new SpringInboxTransactions(transactionManager, store)).build();
 * }</pre>
 *
 * <p>The transaction manager must bind a connection of the store's data source to its transactions (a
 * {@code DataSourceTransactionManager} or {@code JdbcTransactionManager} of it, or a {@code JpaTransactionManager}
 * that exposes it); a transaction without one is refused before the work runs.
 */
public final class SpringInboxTransactions implements InboxTransactions {
  private final SpringDataSourceTransactions transactions;

  /** Transactions of {@code transactionManager}, on its connection of the data source of {@code store}. */
  public SpringInboxTransactions(PlatformTransactionManager transactionManager, JdbcInboxStore store) {
    Objects.requireNonNull(store, "store");
    this.transactions = new SpringDataSourceTransactions(transactionManager, store.dataSource(),
        (what, e) -> storeFailure(store, what, e));
  }

  @Override
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    Objects.requireNonNull(work, "work");
    return transactions.run((connection, status) -> {
      JdbcTransaction tx = JdbcTransaction.of(connection);
      R result = work.execute(tx);
      if (tx.isRollbackOnly()) {
        status.setRollbackOnly();
      }
      return result;
    });
  }

  /** Yes when a Spring transaction is active on this thread: {@link #inTransaction} then joins it. */
  @Override
  public boolean joinsOpenTransaction() {
    return TransactionSynchronizationManager.isActualTransactionActive();
  }

  /**
   * A failure of the database to begin or commit the transaction, as the store says its own: a {@link StoreException}
   * with the SQLState, so that consumers tell an outage or a conflict from a failure of the message. Spring's other
   * failures (a commit refused as rollback-only after the handler swallowed a failure) pass as they are.
   */
  private static RuntimeException storeFailure(JdbcInboxStore store, String what, RuntimeException e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SQLException q) {
        return new StoreException(store.name(), what + " a Spring transaction failed: " + e.getMessage(),
            q.getSQLState(), SqlErrors.isLockTimeout(store.dialect(), q), SqlErrors.isTransient(store.dialect(), q),
            e);
      }
    }
    return e;
  }

  @Override
  public String toString() {
    return "SpringInboxTransactions{" + transactions + '}';
  }
}
