package dev.idem.spring.method.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Idem;
import dev.idem.core.RecordKey;
import dev.idem.spring.method.jpa.JpaShopApp.Orders;
import dev.idem.spring.method.jpa.JpaShopApp.Placed;
import jakarta.persistence.EntityManagerFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.hibernate.dialect.Dialect;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The JPA path on a real database: the entity an {@code @Idempotent} method persists commits in the transaction that
 * writes the record, so a rollback leaves neither, and a race leaves one entity. Hibernate finds its dialect from the
 * database.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JpaMethodsContract {
  private static final String OPERATION = "dev.idem.spring.method.jpa.JpaShopApp$Orders#place";
  private ConfigurableApplicationContext context;
  private Orders orders;
  private Idem idem;
  private final String tenant = "jpa-" + UUID.randomUUID().toString().substring(0, 8);
  private final HttpClient http = HttpClient.newHttpClient();

  /** The {@code spring.datasource.*} arguments of the database. */
  protected abstract List<String> databaseProperties();

  /** The record table, this class's own. */
  protected abstract String recordTable();

  /** The Hibernate dialect the database should be detected as. */
  protected abstract Class<? extends Dialect> dialect();

  @BeforeAll
  void start() {
    List<String> args = new ArrayList<>(databaseProperties());
    args.addAll(List.of("--spring.datasource.hikari.maximum-pool-size=20", "--idem.name=jpa-test",
        "--idem.store.initialize-schema=true", "--idem.store.table=" + recordTable()));
    args.addAll(List.of("--server.port=0", "--server.address=127.0.0.1", "--idem.filter.scope-header=X-Tenant"));
    context = new SpringApplicationBuilder(JpaShopApp.class).web(WebApplicationType.SERVLET)
        .run(args.toArray(String[]::new));
    orders = context.getBean(Orders.class);
    idem = context.getBean(Idem.class);
  }

  @AfterAll
  void stop() {
    if (context != null) {
      context.close();
    }
  }

  private boolean recorded(String id) {
    return idem.store().find(RecordKey.of(tenant, OPERATION, id)).isPresent();
  }

  private HttpResponse<String> post(String id, String sku, int attempt) throws Exception {
    return post("/jpa-orders/", id, sku, attempt);
  }

  private HttpResponse<String> post(String path, String id, String sku, int attempt) throws Exception {
    int port = ((WebServerApplicationContext) context).getWebServer().getPort();
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path + id))
        .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json").header("X-Tenant", tenant)
        .header("Idempotency-Key", "k-" + id).header("Idempotency-Attempt", Integer.toString(attempt))
        .POST(HttpRequest.BodyPublishers.ofString("{\"sku\":\"" + sku + "\"}")).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private int routeRuns(String id) {
    AtomicInteger n = JpaShopApp.OrderRoutes.RUNS.get(tenant + "/" + id);
    return n == null ? 0 : n.get();
  }

  @Test
  void anAtomicRouteJoinsTheJpaTransactionSoAFailedHandlerLeavesNoEntity() throws Exception {
    HttpResponse<String> failed = post("r-fail", "flaky", 1);

    assertThat(failed.statusCode()).isEqualTo(500);
    assertThat(orders.count(tenant, "r-fail")).as("the entity rolled back with the route").isZero();
  }

  @Test
  void aDuplicateFirstAttemptOnTheRouteRunsTheHandlerRollsBackAndReplays() throws Exception {
    HttpResponse<String> first = post("r-1", "pear", 1);
    HttpResponse<String> again = post("r-1", "pear", 1);
    int afterFirsts = routeRuns("r-1");
    HttpResponse<String> retry = post("r-1", "pear", 2);

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(again.body()).isEqualTo(first.body());
    assertThat(again.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(afterFirsts).as("no look-up before a first attempt").isEqualTo(2);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(routeRuns("r-1")).as("a retry reads the record first").isEqualTo(2);
    assertThat(orders.count(tenant, "r-1")).as("committed orders").isEqualTo(1);
  }

  @Test
  void anAtomicRouteCallingAnAtomicMethodJoinsItsTransactionAndARetryReplays() throws Exception {
    HttpResponse<String> first = post("/jpa-placed/", "m-1", "plum", 1);
    HttpResponse<String> retry = post("/jpa-placed/", "m-1", "plum", 2);

    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    assertThat(first.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(JpaShopApp.OrderRoutes.RUNS.get("placed/" + tenant + "/m-1")).hasValue(1);
    assertThat(orders.count(tenant, "m-1")).as("one effect").isEqualTo(1);
    assertThat(recorded("m-1")).as("the method's record committed with the route's").isTrue();
  }

  @Test
  void theTransactionManagerIsJpas() {
    assertThat(context.getBean(PlatformTransactionManager.class)).isInstanceOf(JpaTransactionManager.class);
  }

  @Test
  void hibernateDetectsTheDatabasesDialect() {
    Dialect detected = context.getBean(EntityManagerFactory.class).unwrap(SessionFactoryImplementor.class)
        .getJdbcServices().getDialect();

    assertThat(detected).isInstanceOf(dialect());
  }

  @Test
  void theEntityAndTheRecordCommitTogetherAndADuplicateReplays() {
    Placed first = orders.place(tenant, "o-1", "apple");
    assertThat(orders.place(tenant, "o-1", "apple")).isEqualTo(first);
    assertThat(orders.count(tenant, "o-1")).isEqualTo(1);
    assertThat(recorded("o-1")).isTrue();
  }

  @Test
  void theCallersRollbackLeavesNeitherTheEntityNorTheRecord() {
    TransactionTemplate outer = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
    outer.executeWithoutResult(status -> {
      assertThat(orders.place(tenant, "o-2", "apple").sku()).isEqualTo("apple");
      assertThat(orders.count(tenant, "o-2")).as("visible inside the transaction").isEqualTo(1);
      status.setRollbackOnly();
    });
    assertThat(orders.count(tenant, "o-2")).isZero();
    assertThat(recorded("o-2")).isFalse();
    // the key is free: the retry runs
    orders.place(tenant, "o-2", "apple");
    assertThat(orders.count(tenant, "o-2")).isEqualTo(1);
  }

  @Test
  void aFailureLeavesNeitherTheEntityNorTheRecord() {
    assertThatThrownBy(() -> orders.place(tenant, "o-3", "flaky")).isInstanceOf(IllegalStateException.class);
    assertThat(orders.count(tenant, "o-3")).isZero();
    assertThat(recorded("o-3")).isFalse();
  }

  @Test
  void sixteenConcurrentCallsPerKeyPersistOneEntity() throws Exception {
    int threads = 16;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < 50; round++) {
        String id = "race-" + round;
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<Placed>> answers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          answers.add(pool.submit(() -> {
            start.await(30, TimeUnit.SECONDS);
            return orders.place(tenant, id, "pear");
          }));
        }
        Set<Placed> placed = new HashSet<>();
        for (Future<Placed> answer : answers) {
          placed.add(answer.get(60, TimeUnit.SECONDS));
        }
        assertThat(placed).as("round %d", round).hasSize(1);
        assertThat(orders.count(tenant, id)).as("round %d", round).isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
