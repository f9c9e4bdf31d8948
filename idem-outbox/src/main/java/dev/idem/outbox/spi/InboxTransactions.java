package dev.idem.outbox.spi;

import dev.idem.core.spi.TransactionWork;

/**
 * How an {@link dev.idem.outbox.Inbox} opens the transactions it runs itself ({@code Inbox.inTransaction},
 * {@code Inbox.processBatchAndCommit}, so every broker consumer and the webhook receiver): by default a new
 * transaction of its store. A framework plugs in its own, so that the inbox row, the handler's writes through the
 * framework's data access and the framework's after-commit callbacks belong to one transaction that the framework
 * commits. The Spring Boot starter's runs the work in a Spring transaction of the inbox's data source.
 *
 * <p>Implementations are thread-safe.
 */
@FunctionalInterface
public interface InboxTransactions {
  /**
   * Runs {@code work} in a new transaction and commits it when the work returns; rolls it back instead when the work
   * throws (whatever it throws) or marked the transaction rollback-only. A framework's transactions may instead join
   * a transaction of the framework's already active on the calling thread (the Spring Boot starter's do), which then
   * commits later, with that transaction: a caller that acknowledges a message after this returns must not run
   * inside one. The work gets a transaction of the store's
   * kind (for JDBC, {@code JdbcTransaction.of(connection)} on the transaction's connection with auto-commit off).
   *
   * @return what the work returned
   * @throws Exception what the work threw, or the failure to begin or commit the transaction
   */
  <R> R inTransaction(TransactionWork<R> work) throws Exception;

  /**
   * Whether {@link #inTransaction}, called now on this thread, would join a transaction already open rather than
   * begin one: then the work's failure does not roll back on its own, and the inbox does not take its first-delivery
   * order ({@code Inbox.processBatchAndCommit} with the hint), which rolls back and starts again. The default: no,
   * every call begins a transaction.
   */
  default boolean joinsOpenTransaction() {
    return false;
  }

  /** A store's own transactions: {@link InboxStore#inTransaction}. */
  static InboxTransactions of(InboxStore store) {
    return store::inTransaction;
  }
}
