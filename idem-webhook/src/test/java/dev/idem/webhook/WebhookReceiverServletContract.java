package dev.idem.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idem.jdbc.JdbcDialect;
import dev.idem.jdbc.JdbcInboxStore;
import dev.idem.jdbc.JdbcOutboxStore;
import dev.idem.outbox.Inbox;
import dev.idem.outbox.InboxHandler;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.webhook.WebhookReceiver;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookSigner;
import dev.idem.outbox.webhook.WebhookVerifier;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@link WebhookReceiverServlet} over real HTTP in embedded Jetty 12, on a real database: verification, the inbox's
 * exactly-once effect, and the answers of every refusal. Each test uses fresh webhook ids, so the tests share one
 * server and one set of tables.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class WebhookReceiverServletContract {
  private static final String CONSUMER = "provider-webhooks";
  private static final String OUTBOX = "idem_servlet_wh_outbox";
  private static final String INBOX = "idem_servlet_wh_inbox";
  private static final String EFFECT = "idem_servlet_wh_effect";
  private static final int MAX_BODY = 4096;

  private final WebhookSecret current = WebhookSecret.generate();
  private final WebhookSecret previous = WebhookSecret.generate();
  private final WebhookSecret stranger = WebhookSecret.generate();
  /** Ids whose next handler run throws (once). */
  private final java.util.Set<String> failOnce = ConcurrentHashMap.newKeySet();

  private HikariDataSource dataSource;
  private Inbox inbox;
  private Server server;
  private HttpClient http;
  private String url;

  protected abstract JdbcDialect dialect();

  @BeforeAll
  void start() throws Exception {
    dataSource = open(dialect());
    try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + OUTBOX + "_attempt");
      st.execute("DROP TABLE IF EXISTS " + OUTBOX);
      st.execute("DROP TABLE IF EXISTS " + INBOX);
      st.execute("DROP TABLE IF EXISTS " + EFFECT);
      st.execute("CREATE TABLE " + EFFECT + " (event_id VARCHAR(255) NOT NULL, body VARCHAR(8000) NOT NULL,"
          + " sent_at BIGINT NOT NULL)");
    }
    Outbox.builder(JdbcOutboxStore.builder(dataSource).dialect(dialect()).table(OUTBOX).createSchemaIfMissing(true)
        .build()).build();
    inbox = Inbox.builder(JdbcInboxStore.builder(dataSource).dialect(dialect()).table(INBOX)
        .createSchemaIfMissing(true).build()).build();
    WebhookVerifier verifier = WebhookVerifier.builder(current, previous).maxBodyBytes(MAX_BODY).build();
    InboxHandler handler = (tx, event) -> {
      WebhookMessage message = event.message(WebhookMessage.class);
      Connection connection = tx.unwrap(Connection.class);
      if (failOnce.remove(message.id())) {
        throw new IllegalStateException("the ledger is down");
      }
      try (PreparedStatement ps = connection.prepareStatement(
          "INSERT INTO " + EFFECT + " (event_id, body, sent_at) VALUES (?, ?, ?)")) {
        ps.setString(1, message.id());
        ps.setString(2, message.bodyText());
        ps.setLong(3, message.timestamp().getEpochSecond());
        ps.executeUpdate();
      }
      return "applied " + message.header("content-type").orElse("?");
    };
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/");
    context.addServlet(new ServletHolder(WebhookReceiverServlet.of(WebhookReceiver.of(CONSUMER, verifier, inbox),
        handler)), "/webhooks/provider");
    server.setHandler(context);
    server.start();
    url = "http://127.0.0.1:" + connector.getLocalPort() + "/webhooks/provider";
    http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
  }

  @AfterAll
  void stop() throws Exception {
    if (server != null) {
      server.stop();
    }
    if (dataSource != null) {
      dataSource.close();
    }
  }

  private static HikariDataSource open(JdbcDialect dialect) {
    HikariConfig config = new HikariConfig();
    if (dialect == JdbcDialect.POSTGRESQL) {
      config.setJdbcUrl(System.getProperty("idem.test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/test"));
      config.setUsername(System.getProperty("idem.test.postgres.user", "postgres"));
    } else {
      config.setJdbcUrl("jdbc:h2:mem:webhook-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
      config.setUsername("sa");
    }
    config.setPassword("");
    config.setMaximumPoolSize(16);
    config.setConnectionTimeout(10_000);
    try {
      HikariDataSource ds = new HikariDataSource(config);
      ds.getConnection().close();
      return ds;
    } catch (RuntimeException | SQLException e) {
      throw new IllegalStateException(dialect + " is not reachable at " + config.getJdbcUrl() + ". Start it (bash"
          + " .ci/run does) and run the tests again; tests that need a database never skip.", e);
    }
  }

  // ------------------------------------------------------------------------------------------------ helpers

  private static String newId() {
    return "msg_" + UUID.randomUUID();
  }

  private static long now() {
    return Instant.now().getEpochSecond();
  }

  private static String body(String id) {
    return "{\"type\":\"charge.succeeded\",\"data\":{\"id\":\"" + id + "\",\"amount\":1250}}";
  }

  private static String sign(WebhookSecret secret, String id, long timestamp, String body) {
    return WebhookSigner.of(secret).sign(id, timestamp, body.getBytes(StandardCharsets.UTF_8));
  }

  private HttpResponse<String> post(String id, long timestamp, String signature, String body) throws Exception {
    return post(id, Long.toString(timestamp), signature, body);
  }

  /** A post whose {@code webhook-timestamp} is {@code timestamp} exactly as given. */
  private HttpResponse<String> post(String id, String timestamp, String signature, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    if (id != null) {
      b.header("webhook-id", id);
    }
    b.header("webhook-timestamp", timestamp);
    if (signature != null) {
      b.header("webhook-signature", signature);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  /** A delivery as a Standard Webhooks sender makes it: timestamp now, signed with the current secret. */
  private HttpResponse<String> deliver(String id, String body) throws Exception {
    long ts = now();
    return post(id, ts, sign(current, id, ts, body), body);
  }

  /** The Standard Webhooks signature over {@code id.timestamp.body}, the timestamp as given, computed here. */
  private static String signedOver(WebhookSecret secret, String id, String timestamp, String body) throws Exception {
    byte[] key = Base64.getDecoder().decode(secret.reveal().substring(WebhookSecret.PREFIX.length()));
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(key, "HmacSHA256"));
    mac.update((id + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8));
    return "v1," + Base64.getEncoder().encodeToString(mac.doFinal());
  }

  private int effects(String id) throws SQLException {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + EFFECT + " WHERE event_id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private boolean recorded(String id) {
    return inbox.contains(CONSUMER, id);
  }

  private static void assertProblem(HttpResponse<String> r, int status, String code) {
    assertThat(r.statusCode()).isEqualTo(status);
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(r.body()).contains("\"type\":\"urn:idem:problem:" + code + "\"", "\"status\":" + status,
        "\"code\":\"" + code + "\"", "\"title\":");
  }

  // ------------------------------------------------------------------------------------------------ accepted

  @Test
  void validWebhookIs200WithOneEffectAndARecord() throws Exception {
    String id = newId();

    HttpResponse<String> r = deliver(id, body(id));

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith(
        "application/json"));
    assertThat(r.body()).isEqualTo("{\"id\":\"" + id + "\",\"duplicate\":false}");
    assertThat(effects(id)).isEqualTo(1);
    assertThat(recorded(id)).isTrue();
  }

  @Test
  void redeliveryWithANewTimestampAndSignatureIs200DuplicateAndStillOneEffect() throws Exception {
    String id = newId();
    String body = body(id);
    long first = now() - 120;
    deliver(id, body);

    HttpResponse<String> again = post(id, first, sign(current, id, first, body), body);
    HttpResponse<String> third = deliver(id, body);

    assertThat(again.statusCode()).isEqualTo(200);
    assertThat(again.body()).isEqualTo("{\"id\":\"" + id + "\",\"duplicate\":true}");
    assertThat(third.statusCode()).isEqualTo(200);
    assertThat(third.body()).contains("\"duplicate\":true");
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void signatureMadeWithARotatedOutSecretStillListedIsAccepted() throws Exception {
    String id = newId();
    String body = body(id);
    long ts = now();

    HttpResponse<String> r = post(id, ts, sign(previous, id, ts, body), body);

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void headerWithSeveralSignaturesWhereOnlyTheSecondMatchesIsAccepted() throws Exception {
    String id = newId();
    String body = body(id);
    long ts = now();
    String header = sign(stranger, id, ts, body) + " " + sign(current, id, ts, body);

    HttpResponse<String> r = post(id, ts, header, body);

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void concurrentDeliveriesOfOneWebhookHaveOneEffect() throws Exception {
    String id = newId();
    String body = body(id);
    int n = 8;
    CyclicBarrier barrier = new CyclicBarrier(n);
    ExecutorService pool = Executors.newFixedThreadPool(n);
    List<Future<HttpResponse<String>>> answers = new ArrayList<>();
    try {
      for (int i = 0; i < n; i++) {
        answers.add(pool.submit(() -> {
          barrier.await(10, TimeUnit.SECONDS);
          return deliver(id, body);
        }));
      }
      int fresh = 0;
      for (Future<HttpResponse<String>> f : answers) {
        HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        if (r.body().contains("\"duplicate\":false")) {
          fresh++;
        }
      }

      assertThat(fresh).isEqualTo(1);
      assertThat(effects(id)).isEqualTo(1);
    } finally {
      pool.shutdownNow();
    }
  }

  // ------------------------------------------------------------------------------------------------ refused

  @Test
  void forgedSignatureIs401AndNothingIsStored() throws Exception {
    String id = newId();
    String body = body(id);
    long ts = now();
    String forged = sign(stranger, id, ts, body);

    HttpResponse<String> r = post(id, ts, forged, body);

    assertProblem(r, 401, "AUTH.webhook_signature_invalid");
    assertThat(r.body()).doesNotContain(forged.substring(3), current.reveal().substring(6),
        stranger.reveal().substring(6));
    assertThat(recorded(id)).isFalse();
    assertThat(effects(id)).isZero();
  }

  @Test
  void staleTimestampIs401AndNothingIsStored() throws Exception {
    String id = newId();
    String body = body(id);
    long sixMinutesAgo = now() - 360;

    HttpResponse<String> r = post(id, sixMinutesAgo, sign(current, id, sixMinutesAgo, body), body);

    assertProblem(r, 401, "AUTH.webhook_timestamp_out_of_tolerance");
    assertThat(recorded(id)).isFalse();
    assertThat(effects(id)).isZero();
  }

  @Test
  void timestampFromTheFutureIs401() throws Exception {
    String id = newId();
    String body = body(id);
    long inTenMinutes = now() + 600;

    HttpResponse<String> r = post(id, inTenMinutes, sign(current, id, inTenMinutes, body), body);

    assertProblem(r, 401, "AUTH.webhook_timestamp_out_of_tolerance");
    assertThat(recorded(id)).isFalse();
  }

  @Test
  void tamperedBodyWithTheSignatureOfAnotherBodyIs401AndNothingIsStored() throws Exception {
    String id = newId();
    String signed = body(id);
    String tampered = signed.replace("1250", "9999999");
    long ts = now();

    HttpResponse<String> r = post(id, ts, sign(current, id, ts, signed), tampered);

    assertProblem(r, 401, "AUTH.webhook_signature_invalid");
    assertThat(recorded(id)).isFalse();
    assertThat(effects(id)).isZero();
  }

  @Test
  void signatureOfAnotherIdIs401() throws Exception {
    String id = newId();
    String body = body(id);
    long ts = now();

    HttpResponse<String> r = post(id, ts, sign(current, newId(), ts, body), body);

    assertProblem(r, 401, "AUTH.webhook_signature_invalid");
    assertThat(recorded(id)).isFalse();
  }

  @Test
  void aTimestampWithLeadingZerosIsVerifiedAsSent() throws Exception {
    String id = newId();
    String body = body(id);
    long ts = now();
    String sent = "000" + ts;

    HttpResponse<String> r = post(id, sent, signedOver(current, id, sent, body), body);

    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(effects(id)).isEqualTo(1);
    try (Connection c = dataSource.getConnection(); PreparedStatement ps =
        c.prepareStatement("SELECT sent_at FROM " + EFFECT + " WHERE event_id = ?")) {
      ps.setString(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getLong(1)).isEqualTo(ts);
      }
    }
  }

  @Test
  void aSignatureOfTheShortFormSentWithLeadingZerosIs401() throws Exception {
    String id = newId();
    String body = body(id);
    long ts = now();

    HttpResponse<String> r = post(id, "0" + ts, sign(current, id, ts, body), body);

    assertProblem(r, 401, "AUTH.webhook_signature_invalid");
    assertThat(recorded(id)).isFalse();
  }

  @Test
  void anOverLongOrNonDigitTimestampIs401HeadersInvalid() throws Exception {
    String id = newId();
    String body = body(id);
    long ts = now();
    String overLong = "0".repeat(WebhookVerifier.MAX_TIMESTAMP_DIGITS) + ts;

    HttpResponse<String> tooLong = post(id, overLong, signedOver(current, id, overLong, body), body);
    HttpResponse<String> signed = post(id, "+" + ts, signedOver(current, id, "+" + ts, body), body);

    assertProblem(tooLong, 401, "AUTH.webhook_headers_invalid");
    assertThat(tooLong.body()).contains("longer than " + WebhookVerifier.MAX_TIMESTAMP_DIGITS);
    assertProblem(signed, 401, "AUTH.webhook_headers_invalid");
    assertThat(signed.body()).contains("ASCII digits");
    assertThat(recorded(id)).isFalse();
  }

  @Test
  void missingSignatureOrIdIs401WithoutStoringAnything() throws Exception {
    String id = newId();
    String body = body(id);
    long ts = now();

    HttpResponse<String> noSignature = post(id, ts, null, body);
    HttpResponse<String> noId = post(null, ts, sign(current, id, ts, body), body);

    assertProblem(noSignature, 401, "AUTH.webhook_headers_invalid");
    assertProblem(noId, 401, "AUTH.webhook_headers_invalid");
    assertThat(recorded(id)).isFalse();
  }

  @Test
  void bodyOverTheLimitIs413AndNothingIsStored() throws Exception {
    String id = newId();
    String body = "{\"pad\":\"" + "x".repeat(MAX_BODY) + "\"}";
    long ts = now();

    HttpResponse<String> r = post(id, ts, sign(current, id, ts, body), body);

    assertProblem(r, 413, "VALIDATION.request_too_large");
    assertThat(recorded(id)).isFalse();
    assertThat(effects(id)).isZero();
  }

  @Test
  void headersThatCannotPassAreRefusedBeforeTheBodyIsRead() throws Exception {
    // a body over the limit would be refused with 413 once read: the stale timestamp is judged first, without it
    String id = newId();
    String body = "{\"pad\":\"" + "x".repeat(MAX_BODY) + "\"}";
    long sixMinutesAgo = now() - 360;

    HttpResponse<String> stale = post(id, sixMinutesAgo, sign(current, id, sixMinutesAgo, body), body);
    HttpResponse<String> unsigned = post(id, now(), null, body);

    assertProblem(stale, 401, "AUTH.webhook_timestamp_out_of_tolerance");
    assertProblem(unsigned, 401, "AUTH.webhook_headers_invalid");
    assertThat(recorded(id)).isFalse();
  }

  @Test
  void sameIdWithAnotherBodyIs409AndTheFirstEffectStands() throws Exception {
    String id = newId();
    deliver(id, body(id));

    HttpResponse<String> r = deliver(id, body(id).replace("1250", "1300"));

    assertProblem(r, 409, "CONFLICT.webhook.payload_mismatch");
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void handlerFailureIs500WithNothingRecordedSoThatTheRetryProcessesIt() throws Exception {
    String id = newId();
    String body = body(id);
    failOnce.add(id);

    HttpResponse<String> failed = deliver(id, body);
    boolean recordedAfterFailure = recorded(id);
    int effectsAfterFailure = effects(id);
    HttpResponse<String> retried = deliver(id, body);

    assertProblem(failed, 500, "TRANSIENT.webhook_handler_failed");
    assertThat(failed.body()).contains("\"retryable\":true").doesNotContain("ledger is down");
    assertThat(recordedAfterFailure).isFalse();
    assertThat(effectsAfterFailure).isZero();
    assertThat(retried.statusCode()).isEqualTo(200);
    assertThat(retried.body()).contains("\"duplicate\":false");
    assertThat(effects(id)).isEqualTo(1);
  }

  @Test
  void methodOtherThanPostIs405() throws Exception {
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).GET().build(),
        HttpResponse.BodyHandlers.ofString());

    assertProblem(r, 405, "VALIDATION.method_not_allowed");
    assertThat(r.headers().firstValue("Allow")).hasValue("POST");
  }
}
