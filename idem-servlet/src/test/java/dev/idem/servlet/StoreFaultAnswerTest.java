package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A store that refuses a request for a reason no retry can fix (here, its table is gone) is answered as a server
 * fault that is not retryable and names no SQL, not as an outage that asks the client to retry; a store that cannot
 * be reached still is such an outage.
 */
class StoreFaultAnswerTest {
  private final HttpClient http = HttpClient.newHttpClient();

  @ParameterizedTest
  @ValueSource(strings = {TestService.DB_H2, TestService.DB_POSTGRES})
  void aMissingRecordTableIsANonRetryableServerFaultThatNamesNoSql(String db) throws Exception {
    try (TestService service = new TestService(db, b -> b)) {
      rename(service, "idem_servlet_record", "idem_servlet_record_away");
      try {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(service.url("/orders")))
            .header("Content-Type", "application/json").header("Authorization", "Bearer alice")
            .header("Idempotency-Key", "k-" + UUID.randomUUID())
            .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build(),
            HttpResponse.BodyHandlers.ofString());

        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(r.headers().firstValue("Retry-After")).isEmpty();
        assertThat(r.body()).contains("\"code\":\"INTERNAL.store_error\"").contains("\"retryable\":false")
            .contains("SQLState").doesNotContainIgnoringCase("idem_servlet_record")
            .doesNotContainIgnoringCase("select").doesNotContainIgnoringCase("relation");
      } finally {
        rename(service, "idem_servlet_record_away", "idem_servlet_record");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {TestService.DB_H2, TestService.DB_POSTGRES})
  void anUnreachableStoreIsStillARetryableOutage(String db) throws Exception {
    try (TestService service = new TestService(db, b -> b)) {
      service.dataSource.close();

      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(service.url("/orders")))
          .header("Content-Type", "application/json").header("Authorization", "Bearer alice")
          .header("Idempotency-Key", "k-" + UUID.randomUUID())
          .POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}")).build(),
          HttpResponse.BodyHandlers.ofString());

      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
      assertThat(r.body()).contains("\"code\":\"DEPENDENCY.unavailable\"").contains("\"retryable\":true");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {TestService.DB_H2, TestService.DB_POSTGRES})
  void aStoreFailureInsideAnyFrameworksWrapperIsStillARetryableOutage(String db) throws Exception {
    try (TestService service = new TestService(db, b -> b)) {
      String key = "k-" + UUID.randomUUID();
      HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(service.url("/orders")))
          .header("Content-Type", "application/json").header("Authorization", "Bearer alice")
          .header("Idempotency-Key", key)
          .POST(HttpRequest.BodyPublishers.ofString("{\"mode\":\"wrapped-store\"}")).build(),
          HttpResponse.BodyHandlers.ofString());

      assertThat(r.statusCode()).isEqualTo(503);
      assertThat(r.headers().firstValue("Retry-After")).hasValue("1");
      assertThat(r.body()).contains("\"code\":\"DEPENDENCY.unavailable\"").contains("\"retryable\":true");
      assertThat(service.orders("alice", key)).isZero();
    }
  }

  private static void rename(TestService service, String from, String to) throws Exception {
    try (Connection c = service.dataSource.getConnection(); Statement st = c.createStatement()) {
      st.execute("ALTER TABLE " + from + " RENAME TO " + to);
    }
  }
}
