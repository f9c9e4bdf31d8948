package dev.idem.spring.messaging;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxEvent;
import dev.idem.outbox.InboxHandler;
import java.util.List;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * A handler run with the inbox transaction's connection bound to Spring as the transaction of the inbox's
 * {@link DataSource}, so that a {@code JdbcTemplate} (or anything that takes its connection through Spring's
 * {@code DataSourceUtils}) and {@code @Transactional} methods of the default propagation write in the inbox's
 * transaction: they commit with the inbox row or roll back with it. The binding lasts for the handler's call only.
 */
final class JoinedHandler implements InboxHandler {
  private final InboxHandler handler;
  private final DataSource dataSource;

  private JoinedHandler(InboxHandler handler, DataSource dataSource) {
    this.handler = handler;
    this.dataSource = dataSource;
  }

  /** {@code handler}, joined to Spring's transactions when {@code inbox} stores its rows through JDBC. */
  static InboxHandler of(InboxHandler handler, Inbox inbox) {
    Objects.requireNonNull(handler, "handler");
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

  private interface Call<T> {
    T run() throws Exception;
  }

  private <T> T joined(StoreTransaction tx, Call<T> call) throws Exception {
    if (TransactionSynchronizationManager.hasResource(dataSource)) {
      return call.run(); // a transaction of the caller's is bound already: leave it be
    }
    TransactionSynchronizationManager.bindResource(dataSource,
        new ConnectionHolder(JdbcTransaction.connectionOf(tx), true));
    try {
      return call.run();
    } finally {
      TransactionSynchronizationManager.unbindResource(dataSource);
    }
  }
}
