package dev.idem.spring.lookup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Idem;
import dev.idem.core.Operation;
import dev.idem.core.OperationPolicy;
import dev.idem.spring.Idempotent;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * {@code @Idempotent(lookupFirst = false)} and {@code @Idempotent(attempt = ...)} on a bean method, on H2 and
 * PostgreSQL: without the look-up (always, or for a first attempt) a duplicate runs the method's work again and rolls
 * it back, so its effect still counts once and the duplicate gets the first call's value; with it (the default, or a
 * later attempt) a duplicate never runs the method. Races of 16 callers per key give one effect either way.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LookupFirstTest {
  private final List<ConfigurableApplicationContext> contexts = new ArrayList<>();

  @SpringBootConfiguration
  @EnableAutoConfiguration
  @Import(Ledger.class)
  static class LedgerApp {}

  @Service
  public static class Ledger {
    private final AtomicInteger runs = new AtomicInteger();
    private final JdbcTemplate jdbc;

    public Ledger(JdbcTemplate jdbc) {
      this.jdbc = jdbc;
    }

    @Idempotent(key = "#id", lookupFirst = false)
    @Transactional
    public String bookWithoutLookUp(String id, long amount) {
      return book(id, amount);
    }

    @Idempotent(key = "#id")
    @Transactional
    public String bookWithLookUp(String id, long amount) {
      return book(id, amount);
    }

    @Idempotent(key = "#id", attempt = "#attempt")
    @Transactional
    public String bookAttempt(String id, int attempt, long amount) {
      return book(id, amount);
    }

    /** How often the work ran, rolled back or not (a method: the bean is a proxy). */
    public int runs() {
      return runs.get();
    }

    private String book(String id, long amount) {
      runs.incrementAndGet();
      jdbc.update("INSERT INTO idem_lookup_effect (id, amount) VALUES (?, ?)", id + "-" + UUID.randomUUID(), amount);
      return id + ":" + amount + ":" + runs.get();
    }
  }

  @BeforeAll
  void start() {
    contexts.add(context("h2", "jdbc:h2:mem:lookup-first;DB_CLOSE_DELAY=-1", "sa"));
    contexts.add(context("postgres", System.getProperty("idem.test.postgres.url",
        "jdbc:postgresql://127.0.0.1:5432/test"), System.getProperty("idem.test.postgres.user", "postgres")));
  }

  private static ConfigurableApplicationContext context(String name, String url, String user) {
    ConfigurableApplicationContext context = new SpringApplicationBuilder(LedgerApp.class)
        .web(WebApplicationType.NONE)
        .run("--spring.datasource.url=" + url, "--spring.datasource.username=" + user,
            "--spring.datasource.password=", "--spring.datasource.hikari.maximum-pool-size=20",
            "--idem.name=lookup-" + name, "--idem.store.table=idem_lookup_record",
            "--idem.store.initialize-schema=true", "--idem.completer.enabled=false", "--idem.purge.enabled=false");
    JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
    jdbc.execute("DROP TABLE IF EXISTS idem_lookup_effect");
    jdbc.execute("CREATE TABLE idem_lookup_effect (id VARCHAR(200) PRIMARY KEY, amount BIGINT NOT NULL)");
    return context;
  }

  @AfterAll
  void stop() {
    contexts.forEach(ConfigurableApplicationContext::close);
  }

  private ConfigurableApplicationContext on(String database) {
    return contexts.get("h2".equals(database) ? 0 : 1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgres"})
  void theAttributeSetsTheOperationsPolicy(String database) {
    Idem idem = on(database).getBean(Idem.class);
    OperationPolicy without = idem.policy(operation("bookWithoutLookUp"));
    OperationPolicy with = idem.policy(operation("bookWithLookUp"));
    assertThat(without.lookupFirst()).isFalse();
    assertThat(with.lookupFirst()).isTrue();
  }

  private static Operation operation(String method) {
    return Operation.of(Ledger.class.getName() + "#" + method);
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgres"})
  void aDuplicateWithoutTheLookUpRunsTheWorkRollsItBackAndReplays(String database) {
    Ledger ledger = on(database).getBean(Ledger.class);
    JdbcTemplate jdbc = on(database).getBean(JdbcTemplate.class);
    String id = "no-lookup-" + UUID.randomUUID();
    int before = ledger.runs();
    String first = ledger.bookWithoutLookUp(id, 42);
    String again = ledger.bookWithoutLookUp(id, 42);
    assertThat(again).isEqualTo(first);
    assertThat(ledger.runs() - before).as("the duplicate ran the work, then rolled it back").isEqualTo(2);
    assertThat(effects(jdbc, id)).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgres"})
  void aDuplicateWithTheLookUpNeverRunsTheWork(String database) {
    Ledger ledger = on(database).getBean(Ledger.class);
    JdbcTemplate jdbc = on(database).getBean(JdbcTemplate.class);
    String id = "lookup-" + UUID.randomUUID();
    int before = ledger.runs();
    String first = ledger.bookWithLookUp(id, 7);
    assertThat(ledger.bookWithLookUp(id, 7)).isEqualTo(first);
    assertThat(ledger.runs() - before).isEqualTo(1);
    assertThat(effects(jdbc, id)).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgres"})
  void sixteenCallersPerKeyGiveOneEffectWithoutTheLookUp(String database) throws Exception {
    Ledger ledger = on(database).getBean(Ledger.class);
    raceOneEffectPerKey(database, "race-", (id, caller) -> ledger.bookWithoutLookUp(id, 5));
  }

  /**
   * 100 rounds of 16 callers of one new key, started together: every caller gets the one answer and the key has one
   * effect.
   */
  private void raceOneEffectPerKey(String database, String prefix, BiFunction<String, Integer, String> call)
      throws Exception {
    JdbcTemplate jdbc = on(database).getBean(JdbcTemplate.class);
    int callers = 16;
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    try {
      for (int round = 0; round < 100; round++) {
        String id = prefix + round + "-" + UUID.randomUUID();
        CyclicBarrier start = new CyclicBarrier(callers);
        List<Future<String>> answers = new ArrayList<>();
        for (int c = 0; c < callers; c++) {
          int caller = c;
          Callable<String> task = () -> {
            start.await(10, TimeUnit.SECONDS);
            return call.apply(id, caller);
          };
          answers.add(pool.submit(task));
        }
        List<String> values = new ArrayList<>();
        for (Future<String> f : answers) {
          values.add(f.get(60, TimeUnit.SECONDS));
        }
        assertThat(values).as("round %d: every caller gets the one answer", round).containsOnly(values.get(0));
        assertThat(effects(jdbc, id)).as("round %d", round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgres"})
  void aFirstAttemptSkipsTheLookUpAndALaterAttemptNeverRunsTheWork(String database) {
    Ledger ledger = on(database).getBean(Ledger.class);
    JdbcTemplate jdbc = on(database).getBean(JdbcTemplate.class);
    String id = "attempt-" + UUID.randomUUID();
    int before = ledger.runs();

    String first = ledger.bookAttempt(id, 1, 9);
    String secondFirst = ledger.bookAttempt(id, 1, 9);
    int afterTwoFirstAttempts = ledger.runs() - before;
    String retry = ledger.bookAttempt(id, 2, 9);

    assertThat(secondFirst).isEqualTo(first);
    assertThat(retry).isEqualTo(first);
    assertThat(afterTwoFirstAttempts).as("a duplicate first attempt ran the work, then rolled it back").isEqualTo(2);
    assertThat(ledger.runs() - before).as("the second attempt read the record first").isEqualTo(2);
    assertThat(effects(jdbc, id)).isEqualTo(1);
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgres"})
  void sixteenFirstAttemptsPerKeyGiveOneEffect(String database) throws Exception {
    Ledger ledger = on(database).getBean(Ledger.class);
    raceOneEffectPerKey(database, "attempt-race-", (id, caller) -> ledger.bookAttempt(id, 1 + caller % 2, 3));
  }

  @ParameterizedTest
  @ValueSource(strings = {"h2", "postgres"})
  void anAttemptBelowOneFailsTheCallWithoutRunningIt(String database) {
    Ledger ledger = on(database).getBean(Ledger.class);
    int before = ledger.runs();

    assertThatThrownBy(() -> ledger.bookAttempt("bad-" + UUID.randomUUID(), 0, 1))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("#attempt")
        .hasMessageContaining("not a whole number of at least 1");
    assertThat(ledger.runs()).isEqualTo(before);
  }

  private static int effects(JdbcTemplate jdbc, String id) {
    Integer n = jdbc.queryForObject("SELECT COUNT(*) FROM idem_lookup_effect WHERE id LIKE ?", Integer.class,
        id + "-%");
    return n == null ? 0 : n;
  }
}
