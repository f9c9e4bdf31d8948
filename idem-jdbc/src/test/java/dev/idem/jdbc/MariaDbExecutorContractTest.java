package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.test.AtomicExecutorContract;

class MariaDbExecutorContractTest extends AtomicExecutorContract {
  @Override
  protected IdempotencyStore createStore() {
    return Databases.store(JdbcDialect.MARIADB);
  }

  @Override
  protected void writeBusinessRow(StoreTransaction tx, String marker) throws Exception {
    Databases.insertEffect(JdbcTransaction.connectionOf(tx), marker);
  }

  @Override
  protected void writeUniqueBusinessRow(StoreTransaction tx, String id) throws Exception {
    Databases.insertUniqueEffect(JdbcTransaction.connectionOf(tx), id);
  }

  @Override
  protected int countBusinessRows(String marker) throws Exception {
    return Databases.countEffects(JdbcDialect.MARIADB, marker);
  }
}
