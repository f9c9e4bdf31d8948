package dev.idem.examples.plainservlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.TestPostgres;
import dev.idem.test.http.HttpContractKit;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
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
 * HTTP ({@link HttpContractKit} on {@code POST /orders}, with 50 rounds of 16 concurrent requests, and the example's
 * own rows): on an in-memory H2 database, and on the local PostgreSQL in a schema of its own per run (the test fails
 * when PostgreSQL is unreachable). Each test uses fresh keys, so the tests of one database share one application.
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

  /** The rows of {@link HttpContractKit} on {@code POST /orders}, and the rows of this example. */
  abstract class ContractRows extends HttpContractKit {
    final GatedCarrier carrier = new GatedCarrier();
    PlainServletApp app;

    abstract PlainServletApp.Settings database(PlainServletApp.Settings settings);

    @BeforeAll
    void start() throws Exception {
      app = PlainServletApp.start(database(PlainServletApp.Settings.defaults(0)).withCarrier(carrier));
    }

    @AfterAll
    void stop() throws Exception {
      if (app != null) {
        app.close();
      }
    }

    @Override
    protected URI uri(String path) {
      return URI.create("http://127.0.0.1:" + app.port() + path);
    }

    @Override
    protected HttpRequest.Builder asTenant(HttpRequest.Builder request, String tenant) {
      return request.header(PlainServletApp.TENANT_HEADER, tenant);
    }

    @Override
    protected String tenant() {
      return "acme";
    }

    @Override
    protected String otherTenant() {
      return "globex";
    }

    @Override
    protected String createPath() {
      return "/orders";
    }

    @Override
    protected int expectedCreatedStatus() {
      return 201;
    }

    @Override
    protected long effects(String tenant, String key) throws SQLException {
      try (Connection c = app.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
          "SELECT COUNT(*) FROM example_order WHERE tenant = ? AND idem_key = ?")) {
        ps.setString(1, tenant);
        ps.setString(2, key);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getLong(1);
        }
      }
    }

    @Override
    protected void checkStored(HttpResponse<byte[]> answer, String tenant, String key) {
      assertThat(answer.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
          .startsWith("application/json"));
      assertThat(text(answer)).startsWith("{\"id\":\"ord_").endsWith(",\"tenant\":\"" + tenant + "\",\"order\":"
          + body() + "}");
    }

    @Test
    void getListsAndFetchesTheCreatedOrderEvenWithAKey() throws Exception {
      String tenant = "t-" + UUID.randomUUID();
      HttpResponse<byte[]> created = post("/orders", tenant, newKey(), "{\"item\":\"lamp\"}");
      String location = created.headers().firstValue("Location").orElseThrow();
      HttpRequest.Builder get = asTenant(HttpRequest.newBuilder(uri("/orders")), tenant)
          .header("Idempotency-Key", newKey()).GET();

      HttpResponse<byte[]> list = http.send(get.build(), HttpResponse.BodyHandlers.ofByteArray());
      HttpResponse<byte[]> one = http.send(get.uri(uri(location)).build(), HttpResponse.BodyHandlers.ofByteArray());

      assertThat(list.statusCode()).isEqualTo(200);
      assertThat(text(list)).isEqualTo("{\"orders\":[" + text(created) + "]}");
      assertThat(one.statusCode()).isEqualTo(200);
      assertThat(one.body()).isEqualTo(created.body());
      assertThat(one.headers().firstValue("Idempotency-Status")).isEmpty();
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
