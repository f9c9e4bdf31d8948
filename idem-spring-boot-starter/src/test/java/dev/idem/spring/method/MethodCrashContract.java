package dev.idem.spring.method;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.spring.method.app.CrashPoint;
import dev.idem.spring.method.app.ShopApp;
import dev.idem.test.ChildJvm;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * An {@code @Idempotent} service method under kill -9 on a real database: a child JVM runs it and is killed after the
 * effect's SQL and before the commit (inside the method, or once the record is written too). Afterwards the record is
 * absent or completed, the effects match the completed records, and a retry gives exactly one effect. The database
 * outlives the child: each subclass names one that runs outside it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class MethodCrashContract {
  private static final int SIGKILL_EXIT_CODE = 128 + 9;
  private static final String OPERATION = "dev.idem.spring.method.app.ShopApp$Shop#crash";

  private List<String> app;
  private ConfigurableApplicationContext context;
  private JdbcTemplate jdbc;

  /** The {@code spring.datasource.*} arguments of the database, as the test and the child both connect to it. */
  protected abstract List<String> databaseProperties() throws Exception;

  /** The record table, this class's own. */
  protected abstract String recordTable();

  @BeforeAll
  void start() throws Exception {
    app = new ArrayList<>(databaseProperties());
    app.addAll(List.of("--spring.datasource.hikari.maximum-pool-size=4", "--idem.name=method-crash",
        "--idem.store.initialize-schema=true", "--idem.store.table=" + recordTable(),
        "--idem.completer.enabled=false", "--idem.purge.enabled=false"));
    context = new SpringApplicationBuilder(ShopApp.class).web(WebApplicationType.NONE)
        .run(app.toArray(String[]::new));
    jdbc = context.getBean(JdbcTemplate.class);
    try (Connection c = context.getBean(DataSource.class).getConnection()) {
      jdbc.execute(ShopApp.effectTable(c.getMetaData().getDatabaseProductName()));
    }
  }

  @AfterAll
  void stop() throws Exception {
    if (context != null) {
      context.close();
    }
  }

  private int effects(String key) {
    return jdbc.queryForObject("SELECT COUNT(*) FROM idem_shop_effect WHERE marker = ?", Integer.class,
        "crash/" + key);
  }

  @ParameterizedTest
  @ValueSource(strings = {"in-method", "before-commit"})
  void aKillBeforeTheCommitLeavesNoEffectWithoutItsRecordAndTheRetryRunsOnce(String point) throws Exception {
    String key = "crash-" + UUID.randomUUID();
    List<String> args = new ArrayList<>(List.of(key, point));
    args.addAll(app);
    try (ChildJvm child = ChildJvm.start(MethodCrashChild.class, args)) {
      assertThat(child.awaitLine(CrashPoint.READY, ChildJvm.READY_TIMEOUT)).isEqualTo(CrashPoint.READY + " " + point);
      assertThat(child.kill()).isEqualTo(SIGKILL_EXIT_CODE);
    }
    Idem idem = context.getBean(Idem.class);
    Optional<IdempotencyRecord> record = idem.store().find(RecordKey.of("method-crash", OPERATION, key));

    assertThat(record).as("absent or completed").satisfiesAnyOf(
        r -> assertThat(r).isEmpty(), r -> assertThat(r).get().extracting(IdempotencyRecord::state)
            .isEqualTo(RecordState.COMPLETED));
    assertThat(effects(key)).as("effects equal completed records").isEqualTo(record.isPresent() ? 1 : 0);

    ShopApp.Shop shop = context.getBean(ShopApp.Shop.class);
    assertThat(shop.crash(key, "none")).isEqualTo("done " + key);
    assertThat(shop.crash(key, "none")).isEqualTo("done " + key);
    assertThat(effects(key)).isEqualTo(1);
    assertThat(idem.store().find(RecordKey.of("method-crash", OPERATION, key))).get()
        .extracting(IdempotencyRecord::state).isEqualTo(RecordState.COMPLETED);
  }
}
