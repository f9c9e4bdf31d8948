package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.TransactionalStoreContract;

/** The store contract on a pool whose connections start with auto-commit off. */
class PostgresNoAutoCommitStoreContractTest extends TransactionalStoreContract {
  @Override
  protected IdempotencyStore createStore() {
    Databases.pool(JdbcDialect.POSTGRESQL);
    return JdbcIdempotencyStore.builder(Databases.poolWithoutAutoCommit(JdbcDialect.POSTGRESQL))
        .name("postgres-no-autocommit").build();
  }
}
