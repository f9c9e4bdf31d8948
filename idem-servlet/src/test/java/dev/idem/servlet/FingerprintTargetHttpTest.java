package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the fingerprint takes from a request besides a JSON body, over real HTTP: the query's parameters sorted by
 * name, with the values of a repeated name in the order sent, and the media type of a body hashed raw. The same key
 * with the values of a repeated parameter in another order, or with the same bytes under another media type, is a
 * mismatch and runs nothing; the same media type written another way, and parameters reordered across names, replay.
 * On H2 with Jetty and on PostgreSQL with Tomcat.
 */
class FingerprintTargetHttpTest {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static HttpResponse<String> post(TestService service, String pathAndQuery, String key, String contentType,
      String body) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(service.url(pathAndQuery)))
        .header("Authorization", "Bearer alice").header("Idempotency-Key", key).header("Content-Type", contentType)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void theValuesOfARepeatedQueryParameterKeepTheirOrder(String db, String container) throws Exception {
    try (TestService service = new TestService(db, container, b -> b)) {
      String key = "query-order-" + UUID.randomUUID();
      String json = "application/json";
      String body = "{\"item\":\"book\"}";

      HttpResponse<String> first = post(service, "/orders?sort=date&sort=amount&dry=false", key, json, body);
      HttpResponse<String> acrossNames = post(service, "/orders?dry=false&sort=date&&sort=amount&", key, json, body);
      HttpResponse<String> swapped = post(service, "/orders?sort=amount&sort=date&dry=false", key, json, body);

      assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
      assertThat(acrossNames.headers().firstValue("Idempotency-Status"))
          .as("other names between, empty parameters dropped: %s", acrossNames.body()).hasValue("replayed");
      assertThat(acrossNames.body()).isEqualTo(first.body());
      assertThat(swapped.statusCode()).as(swapped.body()).isEqualTo(422);
      assertThat(swapped.body()).contains("CONFLICT.idempotency.payload_mismatch");
      assertThat(service.orders("alice", key)).isEqualTo(1);
    }
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({"h2,jetty", "postgres,tomcat"})
  void theSameBytesUnderAnotherMediaTypeAreAnotherRequest(String db, String container) throws Exception {
    try (TestService service = new TestService(db, container, b -> b)) {
      String key = "media-type-" + UUID.randomUUID();
      String csv = "id,amount\n1,1050\n";

      HttpResponse<String> first = post(service, "/orders", key, "text/csv; charset=UTF-8", csv);
      HttpResponse<String> rewritten = post(service, "/orders", key, "Text/CSV;Charset=\"utf-8\"", csv);
      HttpResponse<String> octets = post(service, "/orders", key, "application/octet-stream", csv);
      HttpResponse<String> plain = post(service, "/orders", key, "text/plain; charset=UTF-8", csv);

      assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
      assertThat(rewritten.headers().firstValue("Idempotency-Status"))
          .as("the same media type written another way: %s", rewritten.body()).hasValue("replayed");
      assertThat(rewritten.body()).isEqualTo(first.body());
      for (HttpResponse<String> other : List.of(octets, plain)) {
        assertThat(other.statusCode()).as(other.body()).isEqualTo(422);
        assertThat(other.body()).contains("CONFLICT.idempotency.payload_mismatch");
      }
      assertThat(service.orders("alice", key)).isEqualTo(1);
    }
  }
}
