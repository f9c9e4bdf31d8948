package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.EncryptedStoreContract;

class PostgresEncryptedStoreContractTest extends EncryptedStoreContract {
  @Override
  protected IdempotencyStore createStore() {
    return Databases.store(JdbcDialect.POSTGRESQL);
  }
}
