package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.TransactionalStoreContract;

/** The store contract on a pool whose connections start with auto-commit off. */
class MariaDbNoAutoCommitStoreContractTest extends TransactionalStoreContract {
  @Override
  protected IdempotencyStore createStore() {
    Databases.pool(JdbcDialect.MARIADB);
    return JdbcIdempotencyStore.builder(Databases.poolWithoutAutoCommit(JdbcDialect.MARIADB))
        .name("mariadb-no-autocommit").build();
  }
}
