package dev.idem.jdbc.kit;

import dev.idem.core.spi.StoreTransaction;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.outbox.spi.InboxStore;
import dev.idem.test.outbox.RecordingLastInboxStoreContract;
import java.sql.SQLException;
import java.util.concurrent.Future;

class PostgresInboxStoreContractTest extends RecordingLastInboxStoreContract {
  @Override
  protected InboxStore createStore() {
    return KitStores.inbox(JdbcDialect.POSTGRESQL);
  }

  @Override
  protected void closeStore(InboxStore store) throws SQLException {
    KitStores.drop((JdbcInboxStore) store);
  }

  @Override
  protected Object session(StoreTransaction tx) throws SQLException {
    return KitStores.session(JdbcDialect.POSTGRESQL, tx);
  }

  @Override
  protected void awaitBlocked(Object holder, Object waiter, String eventId, Future<?> work) throws SQLException {
    KitStores.awaitBlocked((JdbcInboxStore) store, holder, waiter, eventId, work);
  }
}
