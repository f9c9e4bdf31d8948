package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.EncryptedStoreContract;

class MariaDbEncryptedStoreContractTest extends EncryptedStoreContract {
  @Override
  protected IdempotencyStore createStore() {
    return Databases.store(JdbcDialect.MARIADB);
  }
}
