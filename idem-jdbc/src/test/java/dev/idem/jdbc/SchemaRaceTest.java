package dev.idem.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Instances that start together on a fresh database all create the schema at once. {@code CREATE ... IF NOT EXISTS}
 * alone races on PostgreSQL (the loser of two concurrent index creations fails with 23505 on {@code pg_class}, as a
 * chaos run's three-instance start showed); under the schema lock every instance succeeds and the table is usable.
 */
class SchemaRaceTest {
  private static final int THREADS = 6;
  private static final int ROUNDS = 15;

  @ParameterizedTest
  @EnumSource(value = JdbcDialect.class, names = {"POSTGRESQL", "MARIADB"})
  void instancesCreatingTheSchemaTogetherAllSucceed(JdbcDialect dialect) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    List<String> tables = new ArrayList<>();
    try {
      for (int round = 0; round < ROUNDS; round++) {
        String table = "idem_race_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        tables.add(table);
        CyclicBarrier start = new CyclicBarrier(THREADS);
        List<Future<JdbcIdempotencyStore>> builds = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          builds.add(pool.submit(() -> {
            start.await(30, TimeUnit.SECONDS);
            return JdbcIdempotencyStore.builder(Databases.pool(dialect)).name("race").table(table)
                .createSchemaIfMissing(true).build();
          }));
        }
        for (Future<JdbcIdempotencyStore> build : builds) {
          assertThat(build.get(60, TimeUnit.SECONDS).inProgress(java.time.Instant.now()).count())
              .as("round %d on %s", round, table).isZero();
        }
      }
    } finally {
      pool.shutdownNow();
      try (Connection c = Databases.pool(dialect).getConnection(); Statement st = c.createStatement()) {
        for (String table : tables) {
          st.execute("DROP TABLE IF EXISTS " + table);
          st.execute("DROP TABLE IF EXISTS " + table + "_audit");
        }
      }
    }
  }
}
