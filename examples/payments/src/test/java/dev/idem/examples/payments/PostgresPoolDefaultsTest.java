package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The service's default pool is safe for three instances on one PostgreSQL server with its default
 * {@code max_connections} (100, of which {@code superuser_reserved_connections}, 3, are for superusers): started with
 * no pool setting of the test's own, driven by a ramp of concurrent payments up to six times its bound on requests in
 * flight, it never holds more connections than {@code maximum-pool-size} (read in {@code pg_stat_activity} by the
 * pool's {@code application_name}), a request beyond the bound that finds no slot in time is refused with 503
 * {@code TRANSIENT.overloaded} rather than left waiting for a connection, and three such pools fit under what the
 * server allows with {@value #HEADROOM} connections to spare for other clients.
 */
class PostgresPoolDefaultsTest extends ServiceOfItsOwn {
  /** The instances that share one server in the sizing advice (README, docs/OPERATIONS.md). */
  static final int INSTANCES = 3;
  /** Connections left to other clients: psql sessions, migrations, monitoring, a rolling deployment's extra pool. */
  static final int HEADROOM = 20;
  /**
   * The provider's latency during the ramp, so that the requests of a step overlap, and longer than
   * {@code payments.admission.max-wait} (1 s), so that the ones beyond the bound are refused.
   */
  static final int PROVIDER_LATENCY_MS = 2_000;

  final Caller alice = new Caller("sk_pool_alice_" + UUID.randomUUID().toString().substring(0, 8), "alice");
  /** The service's name and so its connections' {@code application_name}: this class's alone on a shared server. */
  final String name = "pay-pool-" + UUID.randomUUID().toString().substring(0, 8);

  @Override
  protected boolean onPostgres() {
    return true;
  }

  @Override
  protected List<String> arguments() {
    return List.of(alice.argument(), "--spring.application.name=" + name);
  }

  @Test
  void aLoadRampStaysWithinTheDefaultPoolAndThreePoolsFitTheDefaultServer() throws Exception {
    HikariDataSource pool = service.dataSource().unwrap(HikariDataSource.class);
    int maximum = pool.getMaximumPoolSize();
    String server = System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test");
    String user = System.getProperty("idem.test.postgres.user", "postgres");
    AtomicBoolean ramping = new AtomicBoolean(true);
    AtomicInteger peak = new AtomicInteger();
    Map<Integer, Integer> statuses = new TreeMap<>();
    try (Connection watcher = DriverManager.getConnection(server, user, System.getProperty("idem.test.password", ""))) {
      CompletableFuture<Integer> samples = CompletableFuture.supplyAsync(() -> sample(watcher, ramping, peak));
      ExecutorService clients = Executors.newCachedThreadPool();
      try {
        assertThat(service.put("/admin/faults", null, "{\"provider_latency_ms\":" + PROVIDER_LATENCY_MS + "}")
            .status()).isEqualTo(200);
        for (int step : new int[] {4, 16, 48}) {
          List<CompletableFuture<Answer>> answers = new ArrayList<>();
          for (int i = 0; i < step; i++) {
            String body = "{\"account_id\":\"acct_pool_" + step + "_" + i + "\",\"amount\":100,\"currency\":\"EUR\"}";
            answers.add(CompletableFuture.supplyAsync(
                () -> service.post("/payments", alice.apiKey(), UUID.randomUUID().toString(), body), clients));
          }
          for (CompletableFuture<Answer> f : answers) {
            Answer a = f.get(60, TimeUnit.SECONDS);
            statuses.merge(a.status(), 1, Integer::sum);
            if (a.status() != 201) {
              assertThat(a.status()).as(a.toString()).isEqualTo(503);
              assertThat(a.code()).isEqualTo("TRANSIENT.overloaded");
            }
          }
        }
      } finally {
        ramping.set(false);
        service.put("/admin/faults", null, "{\"provider_latency_ms\":0}");
        clients.shutdownNow();
      }
      assertThat(samples.get(60, TimeUnit.SECONDS)).as("pg_stat_activity was read during the ramp").isPositive();
      int maxConnections = setting(watcher, "max_connections");
      int reserved = setting(watcher, "superuser_reserved_connections");
      System.getLogger(PostgresPoolDefaultsTest.class.getName()).log(System.Logger.Level.INFO, "ramp 4/16/48: answers "
          + statuses + ", at most " + peak.get() + " connections of " + maximum + " (max_connections " + maxConnections
          + ", superuser_reserved_connections " + reserved + ")");

      assertThat(statuses).as("the ramp beyond the bound was partly refused, never failed").containsOnlyKeys(201, 503);
      assertThat(peak.get()).as("connections of application_name " + name + " at the peak").isPositive()
          .isLessThanOrEqualTo(maximum);
      assertThat(INSTANCES * maximum).as(INSTANCES + " x spring.datasource.hikari.maximum-pool-size (" + maximum
          + ") + " + HEADROOM + " for other clients must fit max_connections (" + maxConnections
          + ") - superuser_reserved_connections (" + reserved + ")")
          .isLessThanOrEqualTo(maxConnections - reserved - HEADROOM);
      assertThat(pool.getMinimumIdle()).as("an idle instance keeps few connections").isLessThanOrEqualTo(2);
      assertThat(pool.getIdleTimeout()).as("and gives the others back within a minute").isLessThanOrEqualTo(60_000);
    }
  }

  /** Reads the pool's connections in pg_stat_activity until the ramp ends; answers how many readings it took. */
  private int sample(Connection watcher, AtomicBoolean ramping, AtomicInteger peak) {
    int readings = 0;
    try (PreparedStatement ps = watcher.prepareStatement(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = ?")) {
      ps.setString(1, name);
      while (ramping.get() && readings < 1_000_000) {
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          peak.accumulateAndGet(rs.getInt(1), Math::max);
        }
        readings++;
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read pg_stat_activity: " + e.getMessage(), e);
    }
    return readings;
  }

  private static int setting(Connection c, String name) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SHOW " + name)) {
      rs.next();
      return Integer.parseInt(rs.getString(1));
    }
  }
}
