package dev.idem.spring.internal;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import dev.idem.spring.outbox.SpringInboxTransactions;
import java.sql.Connection;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * For an inbox whose transactions are not Spring's (an application's own {@code Inbox} bean built without {@link
 * SpringInboxTransactions}, or no transaction manager of its data source): a handler run with the inbox transaction's
 * connection bound to Spring as the transaction of the inbox's {@link DataSource}, so that a {@code JdbcTemplate} (or
 * anything that takes its connection through Spring's {@code DataSourceUtils}) and {@code @Transactional} methods of
 * the default propagation still write in the inbox's transaction: they commit with the inbox row or roll back with
 * it. The binding lasts for the handler's call only, and the inbox commits, not Spring: synchronizations a
 * {@code @Transactional} method registers run when it returns. Code that asks whether a transaction holds a
 * connection of the data source ({@link SpringDataSourceTransactions#holdsConnectionOf}, such as the starter's
 * externalized events) counts the binding as one, in the handler itself too. An inbox on
 * {@link SpringInboxTransactions} needs none of this: its handler runs in a Spring transaction already.
 */
public final class JoinedHandler implements InboxHandler {
  private final InboxHandler handler;
  private final DataSource dataSource;

  private JoinedHandler(InboxHandler handler, DataSource dataSource) {
    this.handler = handler;
    this.dataSource = dataSource;
  }

  /**
   * {@code handler}, joined to Spring's transactions when {@code inbox} stores its rows through JDBC and opens its
   * transactions otherwise than through Spring; else {@code handler} itself.
   */
  public static InboxHandler of(InboxHandler handler, Inbox inbox) {
    Objects.requireNonNull(handler, "handler");
    if (inbox.transactions() instanceof SpringInboxTransactions) {
      return handler;
    }
    return inbox.store() instanceof JdbcInboxStore store ? new JoinedHandler(handler, store.dataSource()) : handler;
  }

  @Override
  public String handle(StoreTransaction tx, InboxEvent event) throws Exception {
    return joined(tx, () -> handler.handle(tx, event));
  }

  @Override
  public List<String> handleAll(StoreTransaction tx, List<InboxEvent> events) throws Exception {
    return joined(tx, () -> handler.handleAll(tx, events));
  }

  /**
   * The inbox transaction's connection, bound for the handler's call: a transaction that the inbox commits after the
   * handler returns, though no Spring transaction is active ({@link SpringDataSourceTransactions#holdsConnectionOf}).
   */
  static final class Binding extends ConnectionHolder {
    Binding(Connection connection) {
      super(connection, true);
    }
  }

  private interface Call<T> {
    T run() throws Exception;
  }

  private <T> T joined(StoreTransaction tx, Call<T> call) throws Exception {
    if (TransactionSynchronizationManager.hasResource(dataSource)) {
      return call.run(); // a transaction of the caller's is bound already: leave it be
    }
    TransactionSynchronizationManager.bindResource(dataSource, new Binding(JdbcTransaction.connectionOf(tx)));
    try {
      return call.run();
    } finally {
      TransactionSynchronizationManager.unbindResource(dataSource);
    }
  }
}
