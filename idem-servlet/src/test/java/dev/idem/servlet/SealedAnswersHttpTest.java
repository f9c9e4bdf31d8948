package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.crypto.Encryption;
import dev.idem.core.crypto.Keyring;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Sealed answers over real HTTP: an atomic route's kept answer is an envelope in the record table and replays byte for
 * byte; once a byte of it is flipped in the database, every retry gets the 500 problem
 * {@code INTERNAL.record_unreadable} ({@code retryable: false}), and the order is never written again. On Jetty with
 * H2 and on Tomcat with PostgreSQL.
 */
class SealedAnswersHttpTest {
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void onJettyAndH2() throws Exception {
    run(TestService.DB_H2, TestService.JETTY);
  }

  @Test
  void onTomcatAndPostgres() throws Exception {
    run(TestService.DB_POSTGRES_OWN_SCHEMA, TestService.TOMCAT);
  }

  private void run(String db, String container) throws Exception {
    Encryption encryption = Encryption.with(Keyring.generate("k1"));
    try (TestService service = new TestService(db, container, Clock.systemUTC(), b -> b.encryption(encryption),
        f -> f)) {
      String key = "k-" + UUID.randomUUID();
      String body = "{\"item\":\"card 4242424242424242\"}";
      HttpResponse<String> first = post(service, key, body);
      HttpResponse<String> replay = post(service, key, body);
      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(replay.headers().firstValue("Idempotency-Status")).hasValue("replayed");
      assertThat(replay.body()).isEqualTo(first.body());
      byte[] sealed = storedBody(service, key);
      assertThat(Encryption.isSealed(sealed)).isTrue();
      assertThat(new String(sealed, StandardCharsets.UTF_8)).doesNotContain(first.body());
      assertThat(storedFieldHashes(service, key)).as("the field hashes travel sealed with the answer").isNull();
      HttpResponse<String> mismatch = post(service, key, "{\"item\":\"card 4000000000000002\"}");
      assertThat(mismatch.statusCode()).isEqualTo(422);
      assertThat(mismatch.body()).contains("CONFLICT.idempotency.payload_mismatch", "\"fields\":[\"item\"]");

      sealed[sealed.length / 2] ^= 0x10;
      try (Connection c = service.dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
          "UPDATE idem_servlet_record SET response_body = ? WHERE idem_key = ?")) {
        ps.setBytes(1, sealed);
        ps.setString(2, key);
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }

      for (int i = 0; i < 3; i++) {
        HttpResponse<String> refused = post(service, key, body);
        assertThat(refused.statusCode()).isEqualTo(500);
        assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        assertThat(refused.headers().firstValue("Idempotency-Key")).hasValue(key);
        assertThat(refused.body()).contains("\"code\":\"INTERNAL.record_unreadable\"", "\"retryable\":false")
            .doesNotContain("4242");
      }
      assertThat(service.orders("alice", key)).as("the order was written once").isEqualTo(1);
    }
  }

  private HttpResponse<String> post(TestService service, String key, String body) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(service.url("/orders"))).timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer alice").header("Content-Type", "application/json")
        .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String storedFieldHashes(TestService service, String key) throws Exception {
    try (Connection c = service.dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
        "SELECT field_hashes FROM idem_servlet_record WHERE idem_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getString(1);
      }
    }
  }

  private static byte[] storedBody(TestService service, String key) throws Exception {
    try (Connection c = service.dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
        "SELECT response_body FROM idem_servlet_record WHERE idem_key = ?")) {
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        return rs.getBytes(1);
      }
    }
  }
}
