package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.TransactionalStoreContract;

/** The store contract on a pool whose connections start with auto-commit off. */
class PostgresNoAutoCommitStoreContractTest extends TransactionalStoreContract {
  @Override
  protected IdempotencyStore createStore() {
    Databases.store(JdbcDialect.POSTGRESQL); // creates the table, whichever test class runs first
    return JdbcIdempotencyStore.builder(Databases.poolWithoutAutoCommit(JdbcDialect.POSTGRESQL))
        .name("postgres-no-autocommit").build();
  }
}
