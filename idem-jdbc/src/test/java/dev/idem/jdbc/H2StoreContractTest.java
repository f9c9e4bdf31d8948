package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.TransactionalStoreContract;

class H2StoreContractTest extends TransactionalStoreContract {
  @Override
  protected IdempotencyStore createStore() {
    return Databases.store(JdbcDialect.H2);
  }
}
