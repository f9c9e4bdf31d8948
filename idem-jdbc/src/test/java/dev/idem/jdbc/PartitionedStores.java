package dev.idem.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

/**
 * Partitioned-expiry stores on the real PostgreSQL, each test class on a table of its own, dropped and made again
 * the first time a class asks for it in this JVM (no other test uses these tables).
 */
final class PartitionedStores {
  static final Duration WIDTH = Duration.ofHours(1);
  private static final Set<String> FRESH = new HashSet<>();

  private PartitionedStores() {}

  /** A store on {@code table}, partitions one hour wide, three hours made ahead. */
  static JdbcIdempotencyStore store(String table) {
    return store(table, Clock.systemUTC());
  }

  static synchronized JdbcIdempotencyStore store(String table, Clock clock) {
    if (FRESH.add(table)) {
      drop(table);
    }
    return JdbcIdempotencyStore.builder(Databases.pool(JdbcDialect.POSTGRESQL)).name(table).table(table)
        .partitionedExpiry(WIDTH).partitionsAhead(Duration.ofHours(3)).clock(clock).createSchemaIfMissing(true)
        .build();
  }

  static void drop(String table) {
    try (Connection c = Databases.pool(JdbcDialect.POSTGRESQL).getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table + " CASCADE");
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
  }
}
