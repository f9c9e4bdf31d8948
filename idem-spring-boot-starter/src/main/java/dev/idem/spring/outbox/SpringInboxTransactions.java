package dev.idem.spring.outbox;

import dev.idem.core.spi.TransactionWork;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.spi.InboxTransactions;
import java.sql.Connection;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The inbox's transactions in a Spring application: each is a Spring transaction of a {@link PlatformTransactionManager}
 * (propagation {@code REQUIRED}) and the inbox works on its connection of the inbox's {@link DataSource}. So a
 * handler's {@code JdbcTemplate} writes, {@code @Transactional} services and published events join the inbox row's
 * transaction, Spring commits it, and its synchronizations run after that commit: {@code @TransactionalEventListener}
 * {@code AFTER_COMMIT} listeners, the outbox relay's wake-up. The transaction rolls back on anything the work throws,
 * checked exceptions included, or when the work marked it rollback-only. Thread-safe.
 *
 * <pre>{@code
 * Inbox inbox = Inbox.builder(JdbcInboxStore.builder(dataSource).build())
 *     .transactions(new SpringInboxTransactions(transactionManager, dataSource)).build();
 * }</pre>
 *
 * <p>The transaction manager must bind a connection of {@code dataSource} to its transactions (a
 * {@code DataSourceTransactionManager} or {@code JdbcTransactionManager} of it, or a {@code JpaTransactionManager}
 * that exposes it); a transaction without one is refused before the work runs.
 */
public final class SpringInboxTransactions implements InboxTransactions {
  private final TransactionTemplate template;
  private final DataSource dataSource;

  /** Transactions of {@code transactionManager}, on its connection of {@code dataSource}. */
  public SpringInboxTransactions(PlatformTransactionManager transactionManager, DataSource dataSource) {
    this.template = new TransactionTemplate(Objects.requireNonNull(transactionManager, "transactionManager"));
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
  }

  @Override
  public <R> R inTransaction(TransactionWork<R> work) throws Exception {
    Objects.requireNonNull(work, "work");
    Exception[] checked = new Exception[1];
    R result = template.execute(status -> {
      if (!TransactionSynchronizationManager.hasResource(dataSource)) {
        throw new IllegalStateException("the Spring transaction holds no connection of the inbox's data source: "
            + template.getTransactionManager() + " does not manage " + dataSource + "; give the inbox the"
            + " transaction manager of its data source");
      }
      Connection connection = DataSourceUtils.getConnection(dataSource);
      try {
        JdbcTransaction tx = JdbcTransaction.of(connection);
        R done = work.execute(tx);
        if (tx.isRollbackOnly()) {
          status.setRollbackOnly();
        }
        return done;
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        checked[0] = e;
        status.setRollbackOnly();
        return null;
      } finally {
        DataSourceUtils.releaseConnection(connection, dataSource);
      }
    });
    if (checked[0] != null) {
      throw checked[0];
    }
    return result;
  }

  @Override
  public String toString() {
    return "SpringInboxTransactions{" + template.getTransactionManager() + '}';
  }
}
