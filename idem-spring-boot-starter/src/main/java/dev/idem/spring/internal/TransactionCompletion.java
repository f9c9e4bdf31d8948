package dev.idem.spring.internal;

import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import javax.sql.DataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.ConfigurableTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionExecution;
import org.springframework.transaction.TransactionExecutionListener;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Tells when the Spring transaction bound to the thread is completing: from just before the commit or rollback of its
 * connection until its after-commit and after-completion callbacks have run (a
 * {@code @TransactionalEventListener(phase = AFTER_COMMIT)}, {@code AFTER_ROLLBACK} or {@code AFTER_COMPLETION}, a
 * {@code TransactionSynchronization}'s {@code afterCommit}). Spring still reports the transaction as active and its
 * connection as bound then, but the connection has committed or rolled back: what is written on it lands in an
 * implicit transaction that nobody commits.
 *
 * <p>A {@link TransactionExecutionListener} of a transaction manager of a data source marks the transaction's
 * {@link ConnectionHolder} from {@code beforeCommit} / {@code beforeRollback} (after the {@code BEFORE_COMMIT}
 * listeners, just before the connection commits or rolls back) until {@code afterCommit} / {@code afterRollback}
 * (after every synchronization callback). The mark is on the holder, so a {@code REQUIRES_NEW} transaction opened in
 * such a callback (it binds a holder of its own) is not completing. {@link #postProcessor()} adds the listener to every
 * transaction manager bean; one created otherwise can be given {@link #listener(PlatformTransactionManager)}. Without
 * it, only the after-completion phase is recognised: a transaction still active whose synchronizations Spring cleared.
 * Thread-safe.
 */
public final class TransactionCompletion {
  /** The holders of this thread's transactions that are completing; weak, so an unfinished mark holds nothing. */
  private static final ThreadLocal<Set<Object>> COMPLETING = new ThreadLocal<>();

  private TransactionCompletion() {}

  /**
   * Whether the transaction that holds this thread's connection of {@code dataSource} is completing, or a Spring
   * transaction is in its after-completion phase (still active, its synchronizations cleared): see the class notes.
   */
  public static boolean completing(DataSource dataSource) {
    Object holder = TransactionSynchronizationManager.getResource(dataSource);
    if (holder instanceof JoinedHandler.Binding) {
      return false; // the inbox's transaction, which the inbox commits after the handler returns
    }
    Set<Object> completing = COMPLETING.get();
    if (holder != null && completing != null && completing.contains(holder)) {
      return true;
    }
    return TransactionSynchronizationManager.isActualTransactionActive()
        && !TransactionSynchronizationManager.isSynchronizationActive();
  }

  /**
   * A listener that marks the transactions of {@code transactionManager} as completing; null when it binds no
   * connection of a data source (see {@link SpringDataSourceTransactions#dataSourceOf}).
   */
  public static TransactionExecutionListener listener(PlatformTransactionManager transactionManager) {
    DataSource dataSource = SpringDataSourceTransactions.dataSourceOf(transactionManager);
    return dataSource == null ? null : new Marker(dataSource);
  }

  /** Adds {@link #listener} to every {@link ConfigurableTransactionManager} bean of a data source. */
  public static BeanPostProcessor postProcessor() {
    return new BeanPostProcessor() {
      @Override
      public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof ConfigurableTransactionManager configurable
            && bean instanceof PlatformTransactionManager manager
            && configurable.getTransactionExecutionListeners().stream().noneMatch(Marker.class::isInstance)) {
          TransactionExecutionListener listener = listener(manager);
          if (listener != null) {
            configurable.addListener(listener);
          }
        }
        return bean;
      }
    };
  }

  private static final class Marker implements TransactionExecutionListener {
    private final DataSource dataSource;

    Marker(DataSource dataSource) {
      this.dataSource = dataSource;
    }

    @Override
    public void beforeCommit(TransactionExecution transaction) {
      mark(transaction);
    }

    @Override
    public void beforeRollback(TransactionExecution transaction) {
      mark(transaction);
    }

    @Override
    public void afterCommit(TransactionExecution transaction, Throwable commitFailure) {
      unmark(transaction);
    }

    @Override
    public void afterRollback(TransactionExecution transaction, Throwable rollbackFailure) {
      unmark(transaction);
    }

    private void mark(TransactionExecution transaction) {
      // a savepoint's release or rollback (a nested transaction) leaves the transaction going on
      if (transaction.isNewTransaction()
          && TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder holder) {
        Set<Object> completing = COMPLETING.get();
        if (completing == null) {
          completing = Collections.newSetFromMap(new WeakHashMap<>());
          COMPLETING.set(completing);
        }
        completing.add(holder);
      }
    }

    private void unmark(TransactionExecution transaction) {
      Set<Object> completing = COMPLETING.get();
      if (transaction.isNewTransaction() && completing != null) {
        Object holder = TransactionSynchronizationManager.getResource(dataSource);
        if (holder != null) {
          completing.remove(holder);
        }
        if (completing.isEmpty()) {
          COMPLETING.remove();
        }
      }
    }

    @Override
    public String toString() {
      return "TransactionCompletion.Marker{" + dataSource + '}';
    }
  }
}
