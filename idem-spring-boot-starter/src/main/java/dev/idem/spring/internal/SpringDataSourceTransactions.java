package dev.idem.spring.internal;

import java.sql.Connection;
import java.util.Objects;
import java.util.function.BiFunction;
import javax.sql.DataSource;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.ResourceTransactionManager;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Spring transactions (propagation {@code REQUIRED}) of a transaction manager, whose work runs on the transaction's
 * connection of a data source: what the starter's own transactions share ({@link SpringTransactionBoundary} for
 * atomic routes, {@code SpringInboxTransactions} for the inbox). A transaction commits when the work returns, and
 * rolls back when the work throws or marked it rollback-only. What the work throws reaches the caller as it is (a
 * checked exception too), even when the rollback fails as well (that failure is added to it as suppressed), as when
 * a store rolls back a transaction of its own. A transaction that holds no connection of the data source (its
 * manager manages another resource), or that has committed or rolled back already (the work would join it from an
 * after-commit or after-completion callback), is refused before the work runs. Thread-safe.
 */
public final class SpringDataSourceTransactions {
  private final TransactionTemplate template;
  private final DataSource dataSource;
  private final BiFunction<String, RuntimeException, RuntimeException> failed;

  /** Work on the transaction's connection; {@code status} marks the transaction rollback-only. */
  @FunctionalInterface
  public interface Work<R> {
    R run(Connection connection, TransactionStatus status) throws Exception;
  }

  /** Transactions whose own failures (to begin, to commit) reach the caller as Spring throws them. */
  public SpringDataSourceTransactions(PlatformTransactionManager transactionManager, DataSource dataSource) {
    this(transactionManager, dataSource, (what, e) -> e);
  }

  /**
   * Transactions whose own failures are what {@code failed} makes of them.
   *
   * @param failed from what failed ({@code "beginning"} or {@code "committing"}) and Spring's exception (a
   *     {@link TransactionException}, or the {@link DataAccessException} a manager that translates SQL failures
   *     throws, such as Spring Boot's {@code JdbcTransactionManager}), the exception to throw
   */
  public SpringDataSourceTransactions(PlatformTransactionManager transactionManager, DataSource dataSource,
      BiFunction<String, RuntimeException, RuntimeException> failed) {
    this.template = new TransactionTemplate(Objects.requireNonNull(transactionManager, "transactionManager"));
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.failed = Objects.requireNonNull(failed, "failed");
  }

  /**
   * The data source whose connection {@code transactionManager} binds to its transactions: its {@code dataSource}
   * property ({@code DataSourceTransactionManager}, {@code JdbcTransactionManager}, and {@code JpaTransactionManager}
   * when it exposes one), else its resource when that is a data source; null when it has none.
   */
  public static DataSource dataSourceOf(PlatformTransactionManager transactionManager) {
    BeanWrapperImpl properties = new BeanWrapperImpl(transactionManager);
    if (properties.isReadableProperty("dataSource")
        && properties.getPropertyValue("dataSource") instanceof DataSource dataSource) {
      return dataSource;
    }
    return transactionManager instanceof ResourceTransactionManager r && r.getResourceFactory() instanceof DataSource d
        ? d : null;
  }

  /**
   * Whether the Spring transaction active on this thread holds a connection of {@code dataSource}: its manager bound
   * one ({@code DataSourceTransactionManager}, {@code JdbcTransactionManager}, a {@code JpaTransactionManager} that
   * exposes the data source), or it joined one bound before it (the inbox's, see {@link JoinedHandler}); true too in a
   * {@link JoinedHandler}'s handler itself, where the inbox's transaction is bound but no Spring one is active. False
   * outside a transaction, in a transaction of a manager of another resource (another data source's, Kafka's), where
   * {@code DataSourceUtils.getConnection} would hand out a connection of the pool that is part of no transaction, and
   * while the transaction is completing ({@link TransactionCompletion}: its after-commit and after-completion
   * callbacks), when its connection has committed or rolled back already.
   */
  public static boolean holdsConnectionOf(DataSource dataSource) {
    if (TransactionSynchronizationManager.getResource(dataSource) instanceof JoinedHandler.Binding) {
      return true; // the inbox's transaction, bound without a Spring transaction; the inbox commits it
    }
    return TransactionSynchronizationManager.isActualTransactionActive()
        && TransactionSynchronizationManager.hasResource(dataSource)
        && !TransactionCompletion.completing(dataSource);
  }

  /** Runs {@code work} in a transaction: see the class notes. */
  public <R> R run(Work<R> work) throws Exception {
    Objects.requireNonNull(work, "work");
    boolean[] begun = new boolean[1];
    Exception[] thrown = new Exception[1];
    R result;
    try {
      result = template.execute(status -> {
        if (TransactionCompletion.completing(dataSource)) {
          throw new IllegalStateException("the Spring transaction has committed or rolled back already: this runs in"
              + " its after-commit or after-completion phase, where its connection is part of no transaction; run it"
              + " in a transaction of its own (propagation REQUIRES_NEW)");
        }
        if (!holdsConnectionOf(dataSource)) {
          throw new IllegalStateException("the Spring transaction holds no connection of " + dataSource + ": "
              + template.getTransactionManager() + " does not manage that data source; use the transaction manager"
              + " of the data source");
        }
        begun[0] = true;
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
          return work.run(connection, status);
        } catch (RuntimeException e) {
          thrown[0] = e;
          throw e;
        } catch (Exception e) {
          thrown[0] = e;
          status.setRollbackOnly();
          return null;
        } finally {
          DataSourceUtils.releaseConnection(connection, dataSource);
        }
      });
    } catch (RuntimeException e) {
      if (thrown[0] == null) {
        throw e instanceof TransactionException || e instanceof DataAccessException
            ? failed.apply(begun[0] ? "committing" : "beginning", e) : e;
      }
      if (e != thrown[0]) {
        thrown[0].addSuppressed(e); // the rollback failed too: what the work threw counts
      }
      throw thrown[0];
    }
    if (thrown[0] != null) {
      throw thrown[0]; // a checked exception: the transaction rolled back on its rollback-only mark
    }
    return result;
  }

  @Override
  public String toString() {
    return "SpringDataSourceTransactions{" + template.getTransactionManager() + '}';
  }
}
