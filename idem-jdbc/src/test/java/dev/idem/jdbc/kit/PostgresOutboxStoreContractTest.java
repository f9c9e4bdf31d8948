package dev.idem.jdbc.kit;

import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.spi.OutboxStore;
import dev.idem.test.outbox.OutboxStoreContract;
import java.sql.SQLException;

class PostgresOutboxStoreContractTest extends OutboxStoreContract {
  @Override
  protected OutboxStore createStore() {
    return KitStores.outbox(JdbcDialect.POSTGRESQL);
  }

  @Override
  protected void closeStore(OutboxStore store) throws SQLException {
    KitStores.drop((JdbcOutboxStore) store);
  }
}
