package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.TransactionalStoreContract;

/** The store contract on a PostgreSQL record table partitioned by expiry. */
class PostgresPartitionedStoreContractTest extends TransactionalStoreContract {
  @Override
  protected IdempotencyStore createStore() {
    return PartitionedStores.store("idem_pt_contract");
  }

  @Override
  protected boolean purgeDropsPartitions() {
    return true;
  }
}
