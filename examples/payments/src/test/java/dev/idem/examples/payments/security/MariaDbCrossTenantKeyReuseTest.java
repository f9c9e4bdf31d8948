package dev.idem.examples.payments.security;

import dev.idem.examples.payments.DatabaseOfItsOwn;
import java.util.List;
import org.junit.jupiter.api.AfterAll;

/**
 * {@link CrossTenantKeyReuseTest} on MariaDB ({@code idem.test.mariadb.url}), in a database of its own whose default
 * collation is case- and pad-insensitive: the tenants {@code alice} and {@code Alice} stay two scopes only because
 * Idem's and the service's tables choose binary collations themselves.
 */
class MariaDbCrossTenantKeyReuseTest extends CrossTenantKeyReuseTest {
  private DatabaseOfItsOwn database;

  @Override
  List<String> database() {
    database = DatabaseOfItsOwn.mariadbCaseInsensitive();
    return database.arguments();
  }

  @Override
  @AfterAll
  void stop() {
    try {
      super.stop();
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }
}
