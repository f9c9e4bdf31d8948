package dev.idem.examples.plainservlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.TestPostgres;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The example application, started on a free port, answering the rows of the HTTP contract (docs/http.md) over real
 * HTTP: on an in-memory H2 database, and on the local PostgreSQL in a schema of its own per run (the test fails when
 * PostgreSQL is unreachable). Each test uses fresh keys, so the tests of one database share one application.
 */
class PlainServletAppTest {

  @Nested
  @TestInstance(TestInstance.Lifecycle.PER_CLASS)
  class OnH2 extends ContractRows {
    @Override
    PlainServletApp.Settings database(PlainServletApp.Settings settings) {
      return settings.withDb("jdbc:h2:mem:plain-servlet-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1", null, null);
    }
  }

  @Nested
  @TestInstance(TestInstance.Lifecycle.PER_CLASS)
  class OnPostgres extends ContractRows {
    private final String schema = "plain_servlet_" + UUID.randomUUID().toString().replace("-", "");

    @Override
    PlainServletApp.Settings database(PlainServletApp.Settings settings) {
      TestPostgres.execute("CREATE SCHEMA " + schema);
      String url = TestPostgres.url();
      return settings.withDb(url + (url.contains("?") ? "&" : "?") + "currentSchema=" + schema, TestPostgres.user(),
          "");
    }

    @AfterAll
    void dropSchema() {
      TestPostgres.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
    }
  }

  /** A carrier that answers at once, or, while a test holds its gate, signals and waits. */
  static final class GatedCarrier implements Carrier {
    volatile CountDownLatch entered;
    volatile CountDownLatch release;

    @Override
    public String book(String carrierKey, String shipmentId) throws Exception {
      CountDownLatch e = entered;
      CountDownLatch r = release;
      if (e != null && r != null) {
        e.countDown();
        if (!r.await(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never released the carrier");
        }
      }
      return "TRK-" + Math.abs(carrierKey.hashCode());
    }
  }

  abstract class ContractRows {
    final GatedCarrier carrier = new GatedCarrier();
    PlainServletApp app;
    HttpClient http;

    abstract PlainServletApp.Settings database(PlainServletApp.Settings settings);

    @BeforeAll
    void start() throws Exception {
      app = PlainServletApp.start(database(PlainServletApp.Settings.defaults(0)).withCarrier(carrier));
      http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
          .build();
    }

    @AfterAll
    void stop() throws Exception {
      if (app != null) {
        app.close();
      }
    }

    String newKey() {
      return "k-" + UUID.randomUUID();
    }

    HttpResponse<byte[]> post(String path, String tenant, String key, String body) throws Exception {
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.port() + path))
          .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body));
      if (tenant != null) {
        b.header(PlainServletApp.TENANT_HEADER, tenant);
      }
      if (key != null) {
        b.header("Idempotency-Key", key);
      }
      return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    String text(HttpResponse<byte[]> r) {
      return new String(r.body(), StandardCharsets.UTF_8);
    }

    int orders(String tenant, String key) throws SQLException {
      try (Connection c = app.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
          "SELECT COUNT(*) FROM example_order WHERE tenant = ? AND idem_key = ?")) {
        ps.setString(1, tenant);
        ps.setString(2, key);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getInt(1);
        }
      }
    }

    @Test
    void firstRequestInsertsOneOrderAndIsMarkedStored() throws Exception {
      String key = newKey();

      HttpResponse<byte[]> r = post("/orders", "acme", key, "{\"item\":\"book\",\"qty\":1}");

      assertThat(r.statusCode()).isEqualTo(201);
      assertThat(r.headers().firstValue("Idempotency-Status")).hasValue("stored");
      assertThat(r.headers().firstValue("Idempotency-Key")).hasValue(key);
      assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
          .startsWith("application/json"));
      assertThat(text(r)).startsWith("{\"id\":\"ord_").endsWith(",\"tenant\":\"acme\",\"order\":"
          + "{\"item\":\"book\",\"qty\":1}}");
      assertThat(orders("acme", key)).isEqualTo(1);
    }

    @Test
    void retryWithTheSameKeyAndBodyReplaysByteForByteWithoutASecondOrder() throws Exception {
      String key = newKey();
      HttpResponse<byte[]> first = post("/orders", "acme", key, "{\"item\":\"book\",\"qty\":1}");

      // the same JSON with other whitespace and member order is the same request (canonical JSON fingerprint)
      HttpResponse<byte[]> retry = post("/orders", "acme", key, "{ \"qty\": 1, \"item\": \"book\" }");

      assertThat(retry.statusCode()).isEqualTo(201);
      assertThat(retry.headers().firstValue("Idempotency-Status")).hasValue("replayed");
      assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
      assertThat(retry.body()).isEqualTo(first.body());
      assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
      assertThat(orders("acme", key)).isEqualTo(1);
    }

    @Test
    void sameKeyWithAnotherBodyIs422PayloadMismatchNamingTheField() throws Exception {
      String key = newKey();
      post("/orders", "acme", key, "{\"item\":\"book\",\"qty\":1}");

      HttpResponse<byte[]> r = post("/orders", "acme", key, "{\"item\":\"book\",\"qty\":2}");

      assertThat(r.statusCode()).isEqualTo(422);
      assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      assertThat(text(r)).contains("\"code\":\"CONFLICT.idempotency.payload_mismatch\"", "\"fields\":[\"qty\"]",
          "\"retryable\":false");
      assertThat(orders("acme", key)).isEqualTo(1);
    }

    @Test
    void postWithoutAKeyIs400KeyMissingAndInsertsNothing() throws Exception {
      HttpResponse<byte[]> r = post("/orders", "acme", null, "{\"item\":\"book\"}");

      assertThat(r.statusCode()).isEqualTo(400);
      assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
      assertThat(text(r)).contains("\"code\":\"VALIDATION.idempotency_key_missing\"");
    }

    @Test
    void malformedKeysAre400KeyInvalidAndInsertNothing() throws Exception {
      String tooLong = "a".repeat(256);
      String withSpace = "two words " + UUID.randomUUID();

      HttpResponse<byte[]> longAnswer = post("/orders", "acme", tooLong, "{\"item\":\"book\"}");
      HttpResponse<byte[]> spaceAnswer = post("/orders", "acme", withSpace, "{\"item\":\"book\"}");

      assertThat(longAnswer.statusCode()).isEqualTo(400);
      assertThat(text(longAnswer)).contains("\"code\":\"VALIDATION.idempotency_key_invalid\"", "256 characters");
      assertThat(spaceAnswer.statusCode()).isEqualTo(400);
      assertThat(text(spaceAnswer)).contains("\"code\":\"VALIDATION.idempotency_key_invalid\"")
          .doesNotContain(withSpace);
      assertThat(orders("acme", tooLong) + orders("acme", withSpace)).isZero();
    }

    @Test
    void postWithoutATenantIs401AndInsertsNothing() throws Exception {
      String key = newKey();

      HttpResponse<byte[]> r = post("/orders", null, key, "{\"item\":\"book\"}");

      assertThat(r.statusCode()).isEqualTo(401);
      assertThat(text(r)).contains("\"code\":\"AUTH.unauthenticated\"");
    }

    @Test
    void theSameKeyFromAnotherTenantIsAnIndependentRequest() throws Exception {
      String key = newKey();

      HttpResponse<byte[]> acme = post("/orders", "acme", key, "{\"item\":\"book\"}");
      HttpResponse<byte[]> globex = post("/orders", "globex", key, "{\"item\":\"book\"}");

      assertThat(acme.headers().firstValue("Idempotency-Status")).hasValue("stored");
      assertThat(globex.statusCode()).isEqualTo(201);
      assertThat(globex.headers().firstValue("Idempotency-Status")).hasValue("stored");
      assertThat(text(globex)).contains("\"tenant\":\"globex\"").isNotEqualTo(text(acme));
      assertThat(orders("acme", key)).isEqualTo(1);
      assertThat(orders("globex", key)).isEqualTo(1);
    }

    @Test
    void getIsUntouchedEvenWithAKey() throws Exception {
      String tenant = "t-" + UUID.randomUUID();
      HttpResponse<byte[]> created = post("/orders", tenant, newKey(), "{\"item\":\"lamp\"}");
      String location = created.headers().firstValue("Location").orElseThrow();
      HttpRequest.Builder get = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + app.port() + "/orders"))
          .header(PlainServletApp.TENANT_HEADER, tenant).header("Idempotency-Key", newKey()).GET();

      HttpResponse<byte[]> list = http.send(get.build(), HttpResponse.BodyHandlers.ofByteArray());
      HttpResponse<byte[]> one = http.send(get.uri(URI.create("http://127.0.0.1:" + app.port() + location)).build(),
          HttpResponse.BodyHandlers.ofByteArray());

      assertThat(list.statusCode()).isEqualTo(200);
      assertThat(text(list)).isEqualTo("{\"orders\":[" + text(created) + "]}");
      assertThat(one.statusCode()).isEqualTo(200);
      assertThat(one.body()).isEqualTo(created.body());
      for (HttpResponse<byte[]> r : List.of(list, one)) {
        assertThat(r.headers().firstValue("Idempotency-Status")).isEmpty();
        assertThat(r.headers().firstValue("Idempotency-Key")).isEmpty();
      }
    }

    @Test
    void concurrentRequestsWithTheSameKeyInsertExactlyOneOrder() throws Exception {
      int rounds = 50;
      int threads = 16;
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      try {
        for (int round = 0; round < rounds; round++) {
          String key = newKey();
          CyclicBarrier barrier = new CyclicBarrier(threads);
          List<Future<HttpResponse<byte[]>>> answers = new ArrayList<>();
          for (int i = 0; i < threads; i++) {
            answers.add(pool.submit(() -> {
              barrier.await(30, TimeUnit.SECONDS);
              return post("/orders", "acme", key, "{\"item\":\"race\"}");
            }));
          }
          Set<String> bodies = new HashSet<>();
          int stored = 0;
          for (Future<HttpResponse<byte[]>> f : answers) {
            HttpResponse<byte[]> r = f.get(120, TimeUnit.SECONDS);
            // 409 in_progress only if a duplicate waited longer than the store's lock timeout (5 s)
            assertThat(r.statusCode()).as("round %d: %s", round, text(r)).isIn(201, 409);
            if (r.statusCode() == 201) {
              bodies.add(text(r));
              stored += r.headers().firstValue("Idempotency-Status").orElseThrow().equals("stored") ? 1 : 0;
            }
          }
          assertThat(orders("acme", key)).as("orders of round %d", round).isEqualTo(1);
          assertThat(stored).as("answers marked stored in round %d", round).isEqualTo(1);
          assertThat(bodies).as("distinct 201 bodies of round %d", round).hasSize(1);
        }
      } finally {
        pool.shutdownNow();
      }
    }

    @Test
    void duplicateShipmentDuringTheCarrierCallIs409InProgressThenReplays() throws Exception {
      String key = newKey();
      CountDownLatch entered = new CountDownLatch(1);
      CountDownLatch release = new CountDownLatch(1);
      carrier.entered = entered;
      carrier.release = release;
      ExecutorService pool = Executors.newSingleThreadExecutor();
      try {
        Future<HttpResponse<byte[]>> first = pool.submit(() -> post("/shipments", "acme", key,
            "{\"order\":\"ord_1\"}"));
        assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
        carrier.entered = null;
        carrier.release = null;

        HttpResponse<byte[]> duplicate = post("/shipments", "acme", key, "{\"order\":\"ord_1\"}");
        release.countDown();
        HttpResponse<byte[]> firstAnswer = first.get(60, TimeUnit.SECONDS);
        HttpResponse<byte[]> retry = post("/shipments", "acme", key, "{\"order\":\"ord_1\"}");

        assertThat(duplicate.statusCode()).isEqualTo(409);
        assertThat(text(duplicate)).contains("\"code\":\"CONFLICT.idempotency.in_progress\"", "\"retryable\":true");
        assertThat(Long.parseLong(duplicate.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 30L);
        assertThat(firstAnswer.statusCode()).isEqualTo(201);
        assertThat(firstAnswer.headers().firstValue("Idempotency-Status")).hasValue("stored");
        assertThat(text(firstAnswer)).contains("\"status\":\"booked\"", "\"tracking\":\"TRK-");
        assertThat(retry.headers().firstValue("Idempotency-Status")).hasValue("replayed");
        assertThat(retry.body()).isEqualTo(firstAnswer.body());
      } finally {
        release.countDown();
        pool.shutdownNow();
      }
    }
  }
}
