package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;

/** The executor's contract (atomic, phased and leased modes) on a PostgreSQL record table partitioned by expiry. */
class PostgresPartitionedExecutorContractTest extends PostgresExecutorContractTest {
  @Override
  protected IdempotencyStore createStore() {
    return PartitionedStores.store("idem_pt_executor");
  }
}
