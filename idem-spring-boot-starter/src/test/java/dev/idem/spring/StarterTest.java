package dev.idem.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idem.core.Idem;
import dev.idem.core.IdempotencyKey;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.Scope;
import dev.idem.core.fingerprint.Fingerprint;
import dev.idem.core.protocol.ProblemCode;
import dev.idem.jdbc.JdbcIdempotencyStore;
import dev.idem.spring.app.OrdersApp;
import dev.idem.spring.bad.NoMethodApp;
import dev.idem.spring.retry.RetryMeters;
import dev.idem.test.Eventually;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The starter in a running Spring Boot application over real HTTP: auto-configuration on the application's
 * DataSource, {@code @Idempotent} routes, the transaction join through Spring's transaction manager, meters and the
 * actuator endpoint.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class StarterTest {
  private ConfigurableApplicationContext context;
  private HttpClient http;
  private int port;

  protected abstract String[] databaseProperties();

  @BeforeAll
  void start() {
    List<String> args = new ArrayList<>(List.of("--server.port=0", "--server.address=127.0.0.1",
        "--idem.name=starter-test", "--idem.store.initialize-schema=true", "--idem.store.table=idem_starter_record",
        "--spring.datasource.hikari.maximum-pool-size=40", "--idem.metrics.in-progress-refresh=200ms",
        "--management.endpoints.web.exposure.include=health,prometheus,idempotency",
        "--management.endpoint.idempotency.access=unrestricted", "--idem.openapi.path=/idem/openapi.json"));
    args.addAll(List.of(databaseProperties()));
    context = new SpringApplicationBuilder(OrdersApp.class).run(args.toArray(String[]::new));
    port = ((WebServerApplicationContext) context).getWebServer().getPort();
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  }

  @AfterAll
  void stop() {
    context.close();
  }

  private HttpResponse<String> send(String method, String path, String tenant, String key, String body)
      throws Exception {
    return send(method, path, tenant, key, body, 0);
  }

  /** {@code attempt} above 0 is sent as {@code Idempotency-Attempt}. */
  private HttpResponse<String> send(String method, String path, String tenant, String key, String body, int attempt)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (tenant != null) {
      b.header("Authorization", "Bearer " + tenant);
    }
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    if (attempt > 0) {
      b.header("Idempotency-Attempt", Integer.toString(attempt));
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  private int count(String tenant, String key) throws Exception {
    HttpResponse<String> r = send("GET", "/orders/count?tenant=" + tenant + "&key=" + key, null, null, null);
    return Integer.parseInt(r.body().replaceAll("[^0-9]", ""));
  }

  private boolean recordExists(String tenant, String operation, String key) {
    return context.getBean(Idem.class).store()
        .find(new RecordKey(Scope.of(tenant), Operation.of(operation), IdempotencyKey.of(key))).isPresent();
  }

  @Test
  void atomicRouteRunsInTheSameTransactionAsTheRecordAndReplays() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> first = send("POST", "/orders", "alice", key, "{\"item\":\"a\",\"sent_at\":1}");
    HttpResponse<String> replay = send("POST", "/orders", "alice", key, "{\"item\":\"a\",\"sent_at\":2}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.body()).contains("\"joined\":true");
    assertThat(first.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(replay.statusCode()).isEqualTo(201);
    assertThat(replay.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(replay.body()).as("sent_at is excluded from the fingerprint").isEqualTo(first.body());
    assertThat(replay.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
    assertThat(count("alice", key)).isEqualTo(1);
  }

  @Test
  void answerThatIsNotKeptRollsBackTheHandlersTransactionalWrite() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> r = send("POST", "/orders", "alice", key, "{\"mode\":\"transient\"}");

    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(count("alice", key)).isZero();
    assertThat(recordExists("alice", "POST /orders", key)).isFalse();
  }

  @Test
  void answerThatIsNotKeptRollsBackWritesMadeAtCommitTimeToo() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> first = send("POST", "/orders", "alice", key, "{\"mode\":\"transient-late\"}");
    HttpResponse<String> retry = send("POST", "/orders", "alice", key, "{\"mode\":\"transient-late\"}");

    assertThat(first.statusCode()).isEqualTo(503);
    assertThat(retry.statusCode()).isEqualTo(503);
    assertThat(count("alice", key)).as("a beforeCommit write must not survive a rollback-only answer").isZero();
  }

  @Test
  void handlerExceptionRollsBackTheWriteAndKeepsNothing() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> r = send("POST", "/orders", "alice", key, "{\"mode\":\"throw\"}");

    assertThat(r.statusCode()).isEqualTo(500);
    assertThat(count("alice", key)).isZero();
    assertThat(recordExists("alice", "POST /orders", key)).isFalse();
  }

  @Test
  void missingKeyMismatchAndOtherScopeFollowTheContract() throws Exception {
    String key = "k-" + UUID.randomUUID();
    send("POST", "/orders", "alice", key, "{\"item\":\"a\"}");

    HttpResponse<String> missing = send("POST", "/orders", "alice", null, "{\"item\":\"a\"}");
    HttpResponse<String> mismatch = send("POST", "/orders", "alice", key, "{\"item\":\"b\"}");
    HttpResponse<String> bob = send("POST", "/orders", "bob", key, "{\"item\":\"a\"}");
    HttpResponse<String> anonymous = send("POST", "/orders", null, key, "{\"item\":\"a\"}");

    assertThat(missing.statusCode()).isEqualTo(400);
    assertThat(missing.body()).contains("VALIDATION.idempotency_key_missing");
    assertThat(mismatch.statusCode()).isEqualTo(422);
    assertThat(mismatch.body()).contains("CONFLICT.idempotency.payload_mismatch", "\"fields\":[\"item\"]");
    assertThat(bob.statusCode()).isEqualTo(201);
    assertThat(bob.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(anonymous.statusCode()).isEqualTo(401);
    assertThat(count("alice", key)).isEqualTo(1);
    assertThat(count("bob", key)).isEqualTo(1);
  }

  @Test
  void concurrentDuplicatesThroughSpringHaveOneEffect() throws Exception {
    int concurrency = 32;
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    try {
      for (int round = 0; round < 5; round++) {
        String key = "race-" + UUID.randomUUID();
        CyclicBarrier barrier = new CyclicBarrier(concurrency);
        List<Future<HttpResponse<String>>> futures = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
          futures.add(pool.submit(() -> {
            barrier.await(30, TimeUnit.SECONDS);
            return send("POST", "/orders", "alice", key, "{\"item\":\"race\"}");
          }));
        }
        Set<String> bodies = new HashSet<>();
        for (Future<HttpResponse<String>> f : futures) {
          HttpResponse<String> r = f.get(120, TimeUnit.SECONDS);
          assertThat(r.statusCode()).as(r.body()).isIn(201, 409);
          if (r.statusCode() == 201) {
            bodies.add(r.body());
          }
        }
        assertThat(count("alice", key)).as("round %d", round).isEqualTo(1);
        assertThat(bodies).hasSize(1);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void phasedRouteRunsThePhasedOperationBean() throws Exception {
    String key = "p-" + UUID.randomUUID();

    HttpResponse<String> first = send("POST", "/charges", "alice", key, "{\"amount\":5}");
    HttpResponse<String> replay = send("POST", "/charges", "alice", key, "{\"amount\":5}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(replay.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(replay.body()).isEqualTo(first.body());
    String charge = context.getBean(Idem.class).store()
        .find(new RecordKey(Scope.of("alice"), Operation.of("POST /charges"), IdempotencyKey.of(key))).orElseThrow()
        .derive("charge");
    assertThat(OrdersApp.CHARGES.get(charge)).hasValue(1);
  }

  @Test
  void aPhasedRouteSkipsTheLookUpForAFirstAttemptAndAReplayedDuplicateRollsItsFirstPhaseBack() throws Exception {
    String key = "pf-" + UUID.randomUUID();

    HttpResponse<String> first = send("POST", "/charges", "alice", key, "{\"amount\":5}", 1);
    HttpResponse<String> againAsFirst = send("POST", "/charges", "alice", key, "{\"amount\":5}", 1);
    HttpResponse<String> retry = send("POST", "/charges", "alice", key, "{\"amount\":5}", 2);

    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    for (HttpResponse<String> replay : List.of(againAsFirst, retry)) {
      assertThat(replay.headers().firstValue("Idempotency-Status")).hasValue("replayed");
      assertThat(replay.body()).isEqualTo(first.body());
    }
    assertThat(OrdersApp.CREATES.get(key)).as("the second first attempt ran the first phase; the retry read first")
        .hasValue(2);
    String charge = context.getBean(Idem.class).store()
        .find(new RecordKey(Scope.of("alice"), Operation.of("POST /charges"), IdempotencyKey.of(key))).orElseThrow()
        .derive("charge");
    assertThat(OrdersApp.CHARGES.get(charge)).hasValue(1);
  }

  @Test
  void metersCountOutcomesWithoutKeysInTheirTags() throws Exception {
    String key = "m-" + UUID.randomUUID();
    send("POST", "/orders", "alice", key, "{\"item\":\"m\"}");
    send("POST", "/orders", "alice", key, "{\"item\":\"m\"}");

    HttpResponse<String> prometheus = send("GET", "/actuator/prometheus", null, null, null);

    assertThat(prometheus.statusCode()).isEqualTo(200);
    assertThat(prometheus.body()).contains("idem_requests_total{", "outcome=\"created\"", "outcome=\"replayed\"",
        "operation=\"POST /orders\"", "instance=\"starter-test\"", "idem_store_latency_seconds",
        "idem_replay_key_age_seconds_bucket", "idem_records_in_progress{instance=\"starter-test\"}",
        "idem_records_in_progress_lease_expired{instance=\"starter-test\"}",
        "idem_records_in_progress_oldest_age_seconds{instance=\"starter-test\"}");
    assertThat(prometheus.body()).containsPattern("idem_store_latency_seconds_count\\{[^}]*instance=\"starter-test\"");
    assertThat(prometheus.body()).doesNotContain(key);
  }

  @Test
  void theOpenApiFragmentIsServedAtItsPathWithEveryProblemCode() throws Exception {
    HttpResponse<String> answer = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
        + "/idem/openapi.json")).GET().build(), HttpResponse.BodyHandlers.ofString());

    JsonNode fragment = JsonMapper.builder().build().readTree(answer.body());
    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(answer.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
        .startsWith("application/json"));
    assertThat(fragment.path("openapi").asString()).isEqualTo("3.1.0");
    assertThat(fragment.at("/components/parameters/IdempotencyKey/name").asString()).isEqualTo("Idempotency-Key");
    assertThat(fragment.at("/components/parameters/IdempotencyKey/schema/maxLength").asInt()).isEqualTo(255);
    JsonNode responses = fragment.at("/components/responses");
    for (ProblemCode code : List.of(ProblemCode.KEY_EXPIRED, ProblemCode.PAYLOAD_MISMATCH, ProblemCode.IN_PROGRESS,
        ProblemCode.IDEMPOTENCY_KEY_MISSING, ProblemCode.DEPENDENCY_UNAVAILABLE)) {
      assertThat(responses.path(code.code()).path("x-status").asInt()).as(code.code()).isEqualTo(code.status());
      assertThat(responses.path(code.code()).path("x-retryable").asBoolean()).as(code.code())
          .isEqualTo(code.retryable());
    }
    assertThat(responses.path("CONFLICT.idempotency.key_expired").at("/content/application~1problem+json/example"
        + "/retryable").asBoolean(true)).isFalse();
  }

  @Test
  void theKnownOperationsCountersExistAtStartupSoThatAlertsSeeZeroRatherThanNoData() {
    MeterRegistry registry = context.getBean(MeterRegistry.class);

    List<String> requestOutcomes = registry.find("idem.requests").tags("instance", "starter-test", "operation",
        "POST /charges").counters().stream().map(c -> c.getId().getTag("outcome")).toList();
    var leaseExpired = registry.find("idem.lease.expired").tags("instance", "starter-test", "operation",
        "POST /charges").counter();
    var recovered = registry.find("idem.completer.recoveries").tags("instance", "starter-test", "operation",
        "POST /charges", "result", "recovered").counter();
    var failed = registry.find("idem.completer.recoveries").tags("instance", "starter-test", "operation",
        "POST /charges", "result", "failed").counter();
    var atomicLeaseExpired = registry.find("idem.lease.expired").tags("operation", "POST /orders").counter();
    var atomicRecoveries = registry.find("idem.completer.recoveries").tags("operation", "POST /orders").counter();

    assertThat(requestOutcomes).containsExactlyInAnyOrder("created", "replayed", "released", "mismatch",
        "in_progress", "key_expired", "uncertain");
    assertThat(registry.find("idem.records.uncertain").tags("instance", "starter-test", "operation", "POST /charges")
        .counter()).as("a phased operation's records that became uncertain").isNotNull();
    assertThat(registry.find("idem.records.uncertain").tags("operation", "POST /orders").counter())
        .as("an atomic record is never uncertain").isNull();
    assertThat(registry.find("idem.requests").tags("operation", "POST /orders", "outcome", "mismatch").counter())
        .isNotNull();
    assertThat(leaseExpired).as("a phased operation's lease takeovers").isNotNull();
    assertThat(recovered).isNotNull();
    assertThat(failed).isNotNull();
    assertThat(atomicLeaseExpired).as("an atomic operation holds no lease").isNull();
    assertThat(atomicRecoveries).as("the completer never resumes an atomic operation").isNull();
  }

  @Test
  void inProgressGaugesShowARecordStuckInProgress() throws Exception {
    MeterRegistry registry = context.getBean(MeterRegistry.class);
    JdbcIdempotencyStore store = context.getBean(JdbcIdempotencyStore.class);
    // an operation the completer does not run, so that the record stays stuck
    RecordKey stuck = RecordKey.of("gauges", "POST /stuck", "stuck-" + UUID.randomUUID());
    store.inTransaction(tx -> store.insert(tx, IdempotencyRecord.claimed(stuck, Fingerprint.ofHash("0".repeat(64)),
        "gone-worker", Instant.now().minus(Duration.ofMinutes(10)), Duration.ofSeconds(1), Duration.ofHours(1))));
    try {
      // scrapes start reads in the background, at most one per idem.metrics.in-progress-refresh (200 ms here)
      double inProgress = Eventually.await("the in-progress gauge counts the stuck record", Duration.ofSeconds(30),
          () -> registry.get("idem.records.in_progress").tag("instance", "starter-test").gauge().value(),
          v -> v >= 1);
      double leaseExpired = registry.get("idem.records.in_progress.lease_expired").gauge().value();
      double age = registry.get("idem.records.in_progress.oldest.age").timeGauge().value(TimeUnit.SECONDS);

      assertThat(inProgress).isGreaterThanOrEqualTo(1);
      assertThat(leaseExpired).isGreaterThanOrEqualTo(1);
      assertThat(age).as("in progress for ten minutes").isGreaterThanOrEqualTo(600);
      assertThat(context.getBean(RetryMeters.class)).as("the retry meters are a bean").isNotNull();
    } finally {
      store.admin().evict(stuck);
    }
  }

  @Test
  void actuatorEndpointListsInspectsAndEvictsRecords() throws Exception {
    String key = "a-" + UUID.randomUUID();
    send("POST", "/orders", "alice", key, "{\"item\":\"x\"}");
    String one = "/actuator/idempotency/alice/" + key + "?operation=POST%20/orders";

    HttpResponse<String> list = send("GET", "/actuator/idempotency?state=completed&limit=500", null, null, null);
    HttpResponse<String> inspect = send("GET", one, null, null, null);
    HttpResponse<String> evict = send("DELETE", one, null, null, null);
    HttpResponse<String> retried = send("POST", "/orders", "alice", key, "{\"item\":\"y\"}");

    assertThat(list.statusCode()).isEqualTo(200);
    assertThat(list.body()).contains("\"state\":\"completed\"", "\"records\":[");
    assertThat(inspect.body()).contains("\"key\":\"" + key + "\"", "\"response_status\":201", "\"retain_until\":\"");
    assertThat(evict.body()).contains("\"evicted\":true");
    assertThat(retried.headers().firstValue("Idempotency-Status")).as("an evicted key is free").hasValue("stored");
  }

  @Test
  void idempotentMethodWithoutAnExplicitHttpMethodFailsStartupNamingIt() {
    assertThatThrownBy(() -> new SpringApplicationBuilder(NoMethodApp.class)
        .run("--server.port=0", "--spring.datasource.url=jdbc:h2:mem:bad-" + UUID.randomUUID(),
            "--idem.store.initialize-schema=true").close())
        .hasStackTraceContaining("NoMethodApp$Bad.any")
        .hasStackTraceContaining("explicit HTTP method");
  }

  @Test
  void invalidPropertyFailsStartupNamingIt() {
    assertThatThrownBy(() -> new SpringApplicationBuilder(OrdersApp.class)
        .run("--server.port=0", "--spring.datasource.url=jdbc:h2:mem:bad-" + UUID.randomUUID(),
            "--idem.filter.mismatch-status=418").close())
        .hasStackTraceContaining("idem.filter.mismatch-status must be 422 or 409, got 418");
  }

  // ------------------------------------------------------------------ what Spring refuses before the handler runs

  private HttpResponse<String> post(String path, String key, String contentType, String accept, String body)
      throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(60)).header("Authorization", "Bearer alice").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    if (accept != null) {
      b.header("Accept", accept);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  @Test
  void a415FromSpringKeepsNothingAndTheCorrectedRetryRuns() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> refused = post("/typed-orders", key, null, null, "{\"item\":\"book\",\"qty\":1}");
    HttpResponse<String> corrected = post("/typed-orders", key, "application/json", null,
        "{\"item\":\"book\",\"qty\":1}");

    assertThat(refused.statusCode()).isEqualTo(415);
    assertThat(refused.headers().firstValue("Idempotency-Status")).isEmpty();
    assertThat(corrected.statusCode()).isEqualTo(201);
    assertThat(corrected.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(count("alice", key)).isEqualTo(1);
  }

  @Test
  void a400FromSpringsBindingKeepsNothingAndTheCorrectedRetryRuns() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> refused = post("/typed-orders", key, "application/json", null,
        "{\"item\":\"book\",\"qty\":\"many\"}");
    boolean kept = recordExists("alice", "POST /typed-orders", key);
    HttpResponse<String> corrected = post("/typed-orders", key, "application/json", null,
        "{\"item\":\"book\",\"qty\":2}");

    assertThat(refused.statusCode()).isEqualTo(400);
    assertThat(refused.headers().firstValue("Idempotency-Status")).isEmpty();
    assertThat(kept).isFalse();
    assertThat(corrected.statusCode()).isEqualTo(201);
    assertThat(count("alice", key)).isEqualTo(1);
  }

  @Test
  void a406FromSpringKeepsNothingAndTheCorrectedRetryRuns() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> refused = post("/typed-orders", key, "application/json", "application/xml",
        "{\"item\":\"book\",\"qty\":1}");
    HttpResponse<String> corrected = post("/typed-orders", key, "application/json", "application/json",
        "{\"item\":\"book\",\"qty\":1}");

    assertThat(refused.statusCode()).isEqualTo(406);
    assertThat(refused.headers().firstValue("Idempotency-Status")).isEmpty();
    assertThat(corrected.statusCode()).isEqualTo(201);
    assertThat(count("alice", key)).isEqualTo(1);
  }

  @Test
  void aRefusalOfTheHandlersOwnIsStillKeptAndReplayed() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> first = post("/typed-orders", key, "application/json", null, "{\"item\":\"book\",\"qty\":0}");
    HttpResponse<String> again = post("/typed-orders", key, "application/json", null, "{\"item\":\"book\",\"qty\":0}");

    assertThat(first.statusCode()).isEqualTo(422);
    assertThat(first.headers().firstValue("Idempotency-Status")).hasValue("stored");
    assertThat(again.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(again.body()).isEqualTo(first.body());
  }

  @Test
  void onTomcatTheQuotedAndTheBareKeyAreOneKeyAndParametersAreRefused() throws Exception {
    String key = "k-" + UUID.randomUUID();

    HttpResponse<String> quoted = send("POST", "/orders", "alice", "\"" + key + "\"", "{\"item\":\"book\"}");
    HttpResponse<String> bare = send("POST", "/orders", "alice", key, "{\"item\":\"book\"}");
    HttpResponse<String> parameterised =
        send("POST", "/orders", "alice", "\"" + key + "\";p=1", "{\"item\":\"book\"}");
    HttpResponse<String> broken = send("POST", "/orders", "alice", "\"" + key + "\\a\"", "{\"item\":\"book\"}");

    assertThat(quoted.statusCode()).isEqualTo(201);
    assertThat(bare.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(bare.body()).isEqualTo(quoted.body());
    assertThat(parameterised.statusCode()).isEqualTo(400);
    assertThat(parameterised.body()).contains("VALIDATION.idempotency_key_invalid").doesNotContain(key);
    assertThat(broken.statusCode()).isEqualTo(400);
    assertThat(count("alice", key)).isEqualTo(1);
  }

  // ------------------------------------------------------------------ honest defaults

  @Test
  void aRequestWithoutAScopeIsToldTheThreeWaysToGiveOne() throws Exception {
    HttpResponse<String> r = send("POST", "/orders", null, "k-" + UUID.randomUUID(), "{\"item\":\"book\"}");

    assertThat(r.statusCode()).isEqualTo(401);
    assertThat(r.body()).contains("AUTH.unauthenticated").contains("idem.filter.scope-header")
        .contains("ScopeResolver bean").contains("authenticate callers");
  }

  @Test
  void aMissingRecordTableFailsStartupNamingTheTableAndTheProperties() {
    assertThatThrownBy(() -> new SpringApplicationBuilder(OrdersApp.class)
        .run("--server.port=0", "--spring.datasource.url=jdbc:h2:mem:notable-" + UUID.randomUUID(),
            "--idem.store.initialize-schema=false", "--idem.store.table=idem_nowhere").close())
        .hasStackTraceContaining("the record table idem_nowhere is missing")
        .hasStackTraceContaining("idem.store.initialize-schema=true")
        .hasStackTraceContaining("idem.store.table");
  }
}
