package dev.idem.spring.internal;

import dev.idem.core.Execution;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.servlet.IdempotentExchange;
import dev.idem.servlet.IdempotentRoute;
import dev.idem.servlet.spi.TransactionBoundary;
import java.util.concurrent.Callable;
import javax.sql.DataSource;
import org.springframework.transaction.PlatformTransactionManager;

/**
 * Runs an atomic route inside a Spring transaction and binds that transaction's connection to the store, so the
 * record, the handler's {@code @Transactional} services and its {@code JdbcTemplate} writes commit (or roll back)
 * together. The store joins under a savepoint: a lost race or an answer that is not kept rolls back everything the
 * handler wrote. Other modes run as they are (a phased operation commits phase by phase).
 */
public final class SpringTransactionBoundary implements TransactionBoundary {
  private final SpringDataSourceTransactions transactions;
  private final JdbcIdempotencyStore store;

  public SpringTransactionBoundary(PlatformTransactionManager transactionManager, DataSource dataSource,
      JdbcIdempotencyStore store) {
    this.transactions = new SpringDataSourceTransactions(transactionManager, dataSource);
    this.store = store;
  }

  @Override
  public <T> T around(IdempotentExchange exchange, Callable<T> execution) throws Exception {
    if (exchange.route().mode() != IdempotentRoute.Mode.ATOMIC) {
      return execution.call();
    }
    return transactions.run((connection, status) -> {
      try (JdbcIdempotencyStore.Binding binding = store.useConnection(connection)) {
        T executed = execution.call();
        if (!(executed instanceof Execution) || ((Execution) executed).outcome() != Execution.Outcome.STORED) {
          // Not kept, a replay, or a refusal: nothing of this request may commit. The store already rolled back to
          // its savepoint, but writes that happen at commit time (a JPA flush, beforeCommit hooks) would not be.
          status.setRollbackOnly();
        }
        return executed;
      }
    });
  }
}
