package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.TransactionalStoreContract;

class MariaDbStoreContractTest extends TransactionalStoreContract {
  @Override
  protected IdempotencyStore createStore() {
    return Databases.store(JdbcDialect.MARIADB);
  }
}
