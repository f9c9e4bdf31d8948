package dev.idem.jdbc;

import dev.idem.core.spi.IdempotencyStore;
import dev.idem.test.EncryptedStoreContract;
import java.sql.Connection;
import java.sql.Statement;
import java.util.UUID;

/** The sealing store's contract on Postgres, each test on a record table of its own (rotation walks the whole table). */
class PostgresEncryptedStoreContractTest extends EncryptedStoreContract {
  private String table;

  @Override
  protected IdempotencyStore createStore() {
    table = "idem_sealed_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    return JdbcIdempotencyStore.builder(Databases.pool(JdbcDialect.POSTGRESQL)).name("sealed").table(table)
        .createSchemaIfMissing(true).build();
  }

  @Override
  protected void closeStore(IdempotencyStore store) throws Exception {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE " + table);
    }
  }
}
