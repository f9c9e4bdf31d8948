package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.core.spi.StoreTransaction;
import dev.idem.test.AtomicExecutorContract;

/** The executor's contract (atomic, phased and leased modes) on a PostgreSQL record table partitioned by expiry. */
class PostgresPartitionedExecutorContractTest extends AtomicExecutorContract {
  @Override
  protected IdempotencyStore createStore() {
    return PartitionedStores.store("idem_pt_executor");
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
    return Databases.countEffects(JdbcDialect.POSTGRESQL, marker);
  }
}
