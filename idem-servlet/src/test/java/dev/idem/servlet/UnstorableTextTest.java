package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.servlet.spi.ScopeResolver;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Nothing the filter sends to the store can hold text the database refuses (PostgreSQL refuses a NUL, no database
 * can hold an unpaired surrogate): a scope with a control character or an unpaired surrogate gets 400
 * {@code VALIDATION.scope_invalid} and leaves no record; keys with such bytes get 400
 * {@code VALIDATION.idempotency_key_invalid}; a JSON body with a lone surrogate gets 400
 * {@code VALIDATION.malformed_json}; and a JSON body with NUL in its member names and values (which the store keeps
 * as field hashes and a fingerprint, escaped) is kept, replayed and compared like any other. The scope comes from a
 * header here ({@link ScopeResolver#header}), as a gateway in front of a service would set it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class UnstorableTextTest {
  private static final String TENANT_HEADER = "X-Tenant";
  private final String database;
  private final String container;
  private TestService service;

  /** On a {@link TestService} database ({@code DB_*}) in a container ({@link TestService#JETTY}, {@code TOMCAT}). */
  UnstorableTextTest(String database, String container) {
    this.database = database;
    this.container = container;
  }

  @BeforeAll
  void start() throws Exception {
    service = new TestService(database, container, b -> b.scope(ScopeResolver.header(TENANT_HEADER)));
  }

  @AfterAll
  void stop() throws Exception {
    service.close();
  }

  @Test
  void aScopeLongerThanTheStoreHoldsIsRefusedWith400SayingSoAndLeavesNoRecord() throws Exception {
    String key = "k-" + UUID.randomUUID();

    String answer = post(utf8("CN=" + "x".repeat(300) + ",O=Example"), utf8(key), "{\"item\":\"book\"}");

    assertThat(answer).as(answer).startsWith("HTTP/1.1 400").contains("VALIDATION.scope_invalid")
        .contains("longer than 255 characters").doesNotContain("x".repeat(300))
        .contains("\r\nIdempotency-Key: " + key + "\r\n");
    assertThat(records(key)).isZero();
  }

  @Test
  void aScopeWithAControlCharacterOrAnUnpairedSurrogateIsRefusedWith400AndLeavesNoRecord() throws Exception {
    List<byte[]> scopes = List.of(utf8("t-\u0085-" + UUID.randomUUID()), utf8("t-\u009f"),
        new byte[] {'t', (byte) 0xED, (byte) 0xA0, (byte) 0x80}, new byte[] {'t', (byte) 0x85},
        new byte[] {'t', 0x01, 'x'});
    for (byte[] scope : scopes) {
      String key = "k-" + UUID.randomUUID();

      String answer = post(scope, utf8(key), "{\"item\":\"book\"}");

      assertThat(answer).as(answer).startsWith("HTTP/1.1 400");
      if (!answer.contains("VALIDATION.scope_invalid")) {
        // the container refused the header itself, before the filter
        assertThat(answer).as(answer).doesNotContain("Idempotency-Status");
      } else {
        assertThat(answer).contains("application/problem+json").contains("\"retryable\":false")
            .as("the valid key is echoed").contains("\r\nIdempotency-Key: " + key + "\r\n");
      }
      assertThat(records(key)).as("records of " + key).isZero();
    }
    assertThat(post(utf8("t-\u0085"), utf8("k-" + UUID.randomUUID()), "{\"item\":\"book\"}"))
        .as("a C1 control the container passes on").contains("VALIDATION.scope_invalid");
  }

  @Test
  void keysWithNulOrSurrogateBytesAreRefusedWith400() throws Exception {
    List<byte[]> keys = List.of(new byte[] {'k', 0x00, 'x'}, new byte[] {'k', (byte) 0xED, (byte) 0xA0, (byte) 0x80},
        utf8("k-\u0085"), new byte[] {'"', 'k', 0x00, '"'});
    for (byte[] key : keys) {
      String answer = post(utf8("alice-text"), key, "{\"item\":\"book\"}");

      assertThat(answer).as(answer).startsWith("HTTP/1.1 400");
    }
    assertThat(records(null)).isZero();
  }

  @Test
  void aLoneSurrogateInAJsonBodyIsRefusedAsMalformed() throws Exception {
    for (String body : List.of("{\"item\":\"\\ud800\"}", "{\"\\udc00\":1}", "{\"item\":\"a\\ud800\\u0041\"}")) {
      String key = "k-" + UUID.randomUUID();

      String answer = post(utf8("alice-text"), utf8(key), body);

      assertThat(answer).as(body).startsWith("HTTP/1.1 400").contains("VALIDATION.malformed_json");
      assertThat(records(key)).isZero();
    }
  }

  @Test
  void nulInJsonMemberNamesAndValuesIsKeptReplayedAndComparedLikeAnyText() throws Exception {
    String key = "k-" + UUID.randomUUID();
    String body = "{\"\\u0000\":\"a\\u0000b\",\"item\":\"x\\u0000\"}";

    String first = post(utf8("alice-text"), utf8(key), body);
    String again = post(utf8("alice-text"), utf8(key), body);
    String other = post(utf8("alice-text"), utf8(key), "{\"\\u0000\":\"changed\",\"item\":\"x\\u0000\"}");

    assertThat(first).as(first).startsWith("HTTP/1.1 201").contains("Idempotency-Status: stored");
    assertThat(again).as(again).startsWith("HTTP/1.1 201").contains("Idempotency-Status: replayed");
    assertThat(other).as(other).startsWith("HTTP/1.1 422").contains("CONFLICT.idempotency.payload_mismatch")
        .contains("\"fields\":[\"\\u0000\"]");
    assertThat(records(key)).isOne();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Records of the key, or of every key of the tenants these tests use when {@code key} is null. */
  private long records(String key) throws SQLException {
    String sql = key == null ? "SELECT COUNT(*) FROM idem_servlet_record WHERE scope = 'alice-text' AND idem_key"
        + " NOT LIKE 'k-%'" : "SELECT COUNT(*) FROM idem_servlet_record WHERE idem_key = ?";
    try (Connection c = service.dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql)) {
      if (key != null) {
        ps.setString(1, key);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** A POST to {@code /orders} with the scope header and key as raw bytes; answers everything the server sent. */
  private String post(byte[] scope, byte[] key, String body) throws Exception {
    byte[] bytes = utf8(body);
    try (Socket socket = new Socket("127.0.0.1", service.port)) {
      socket.setSoTimeout(30_000);
      ByteArrayOutputStream req = new ByteArrayOutputStream();
      req.writeBytes(("POST /orders HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json"
          + "\r\nContent-Length: " + bytes.length + "\r\n" + TENANT_HEADER + ": ").getBytes(StandardCharsets.US_ASCII));
      req.writeBytes(scope);
      req.writeBytes("\r\nIdempotency-Key: ".getBytes(StandardCharsets.US_ASCII));
      req.writeBytes(key);
      req.writeBytes("\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      req.writeBytes(bytes);
      OutputStream out = socket.getOutputStream();
      out.write(req.toByteArray());
      out.flush();
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
