package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.Caller;
import dev.idem.examples.payments.DatabaseOfItsOwn;
import dev.idem.examples.payments.RunningService;
import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookSigner;
import dev.idem.test.Eventually;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Security: secrets and {@code Authorization} values never reach the logs or the database. The service runs with
 * {@code dev.idem} at DEBUG, its log written to a file, and takes a workload that touches every place a secret passes:
 * API keys and the admin key on every request (the admin's loopback exemption off), unknown keys and other
 * {@code Authorization} schemes ({@code Basic}, {@code Token}), webhook endpoints whose {@code whsec_} secret is
 * answered once, deliveries to a sink that accepts and one that fails, the provider's signed webhooks (genuine, forged
 * and re-sent), payments, refunds, replays, payload mismatches, declines and provider outages (5xx) set through
 * {@code PUT /admin/faults}. Then {@link SecretScan} greps the log file, every column of every table (stored responses
 * and their headers, outbox payloads, headers and errors, inbox rows, the service's own tables) and the admin views
 * for every secret: each API key and {@code Authorization} value, the admin key, each webhook secret (whole, its base64
 * body and its key bytes in hex) and any {@code Bearer} credential: none may be anywhere. The endpoints' signing
 * secrets, which the service must keep to sign, are sealed at rest in {@code pay_webhook_endpoint.secret} (the service
 * seals by default), and so is every outbox payload. Runs on H2 and on PostgreSQL.
 */
class SecretsNeverStoredOrLoggedTest {
  /** Where the service keeps each tenant endpoint's signing secret, sealed: it must keep it to sign what it sends. */
  static final String SIGNING_SECRET_COLUMN = "pay_webhook_endpoint.secret";
  static final Duration DEADLINE = Duration.ofSeconds(60);
  private static final SecureRandom RANDOM = new SecureRandom();

  @TempDir
  Path logs;

  @Test
  void onH2(@TempDir Path data) throws Exception {
    runAndScan(List.of("--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments")
        + ";WRITE_DELAY=0;AUTO_SERVER=FALSE"));
  }

  @Test
  void onPostgres() throws Exception {
    try (DatabaseOfItsOwn database = DatabaseOfItsOwn.postgres()) {
      runAndScan(database.arguments());
    }
  }

  private void runAndScan(List<String> databaseArguments) throws Exception {
    Secrets secrets = new Secrets();
    Caller alice = new Caller("sk_live_alice_" + token(), "alice");
    Caller bob = new Caller("sk_live_bob_" + token(), "bob");
    String adminKey = "sk_admin_" + token();
    WebhookSecret providerSecret = WebhookSecret.generate();
    secrets.key(alice.apiKey()).key(bob.apiKey()).key(adminKey).webhook(providerSecret.reveal());
    Path logFile = logs.resolve("service.log");
    List<String> args = new ArrayList<>(databaseArguments);
    args.addAll(List.of(alice.argument(), bob.argument(), "--payments.admin-key=" + adminKey,
        "--payments.admin-allow-loopback=false", "--payments.provider.webhook-secret=" + providerSecret.reveal(),
        "--payments.provider.webhook-resend-ratio=1.0", "--payments.outbox.max-attempts=2",
        "--payments.outbox.poll-interval=50ms", "--payments.outbox.backoff-initial=100ms",
        "--payments.outbox.backoff-max=100ms",
        "--idem.completer.interval=200ms", "--idem.default-lease=2s", "--logging.level.root=INFO",
        "--logging.level.dev.idem=DEBUG", "--logging.file.name=" + logFile));
    List<String> answers = new ArrayList<>();

    try (Sink accepting = Sink.start(200); Sink failing = Sink.start(500);
        RunningService service = RunningService.start(args.toArray(String[]::new))) {
      Workload workload = new Workload(service, adminKey, secrets, answers);
      workload.run(alice, bob, accepting, failing, providerSecret);
      Eventually.await("the accepting sink got every event", DEADLINE, accepting::received, n -> n >= 4);
      Eventually.await("the failing sink was tried twice", DEADLINE, failing::received, n -> n >= 2);
      Eventually.await("the relay settled", DEADLINE, () -> service.count("SELECT COUNT(*) FROM idem_outbox"
          + " WHERE status = 'pending'"), n -> n == 0);
      answers.add(workload.adminViews().text());

      List<SecretScan.Finding> inTables = SecretScan.scanTables(service.dataSource(), secrets.all());
      List<SecretScan.Finding> inAnswers = new ArrayList<>();
      for (String answer : answers) {
        inAnswers.addAll(SecretScan.scanText("an answer", answer, secrets.all()));
      }
      String log = Files.readString(logFile, StandardCharsets.UTF_8);
      List<SecretScan.Finding> inLogs = SecretScan.scanText("service.log", log, secrets.all());

      assertThat(log).as("the log holds the DEBUG lines of dev.idem")
          .containsPattern("DEBUG [^\\n]* (dev\\.idem|d\\.i\\.)");
      assertThat(inLogs).as("secrets in the log").isEmpty();
      assertThat(inAnswers).as("secrets in answers other than the creation of an endpoint").isEmpty();
      assertThat(inTables).as("secrets in any table: " + SIGNING_SECRET_COLUMN + " holds them sealed").isEmpty();
      assertThat(service.count("SELECT COUNT(*) FROM pay_webhook_endpoint WHERE secret LIKE 'idem:enc:1:%'"))
          .as("every endpoint's secret is sealed").isEqualTo(2);
      assertThat(service.count("SELECT COUNT(*) FROM idem_outbox WHERE payload NOT LIKE 'idem:enc:1:%'"))
          .as("every outbox payload is sealed").isZero();
      assertThat(service.count("SELECT COUNT(*) FROM idem_outbox")).as("the workload wrote events").isPositive();
    }
  }

  /** The requests that carry, create or could leak a secret. */
  private static final class Workload {
    private final RunningService service;
    private final String adminKey;
    private final Secrets secrets;
    private final List<String> answers;

    Workload(RunningService service, String adminKey, Secrets secrets, List<String> answers) {
      this.service = service;
      this.adminKey = adminKey;
      this.secrets = secrets;
      this.answers = answers;
    }

    void run(Caller alice, Caller bob, Sink accepting, Sink failing, WebhookSecret providerSecret) {
      String aliceEndpoint = endpoint(alice, accepting);
      endpoint(bob, failing);
      assertThat(keep(service.get("/webhook-endpoints/" + aliceEndpoint, alice.apiKey())).status()).isEqualTo(200);
      keep(service.get("/webhook-endpoints", alice.apiKey()));

      for (Caller caller : List.of(alice, bob)) {
        String key = UUID.randomUUID().toString();
        Answer paid = keep(pay(caller, key, "acct_secret", 1200));
        assertThat(paid.status()).as(paid.toString()).isEqualTo(201);
        keep(pay(caller, key, "acct_secret", 1200));
        assertThat(keep(pay(caller, key, "acct_secret", 1300)).status()).isEqualTo(422);
        assertThat(keep(pay(caller, UUID.randomUUID().toString(), "acct_declined_secret", 50)).status())
            .isEqualTo(402);
        String refundKey = UUID.randomUUID().toString();
        String refund = "{\"payment_id\":\"" + paid.json().path("id").asString() + "\",\"amount\":200}";
        assertThat(keep(service.post("/refunds", caller.apiKey(), refundKey, refund)).status()).isEqualTo(201);
        keep(service.post("/refunds", caller.apiKey(), refundKey, refund));
        keep(service.get("/payments/" + paid.json().path("id").asString(), caller.apiKey()));
        keep(service.get("/ledger/summary", caller.apiKey()));
      }
      outages(alice);
      strangers();
      providerWebhooks(providerSecret);
    }

    /** Provider errors, then timeouts after commit (the completer finishes them), with 5xx answers on the way. */
    private void outages(Caller caller) {
      for (String fault : List.of("provider_error_rate", "provider_timeout_after_commit_rate")) {
        String key = UUID.randomUUID().toString();
        faults("{\"" + fault + "\":1}");
        Answer failed = keep(pay(caller, key, "acct_outage", 900));
        faults("{\"provider_error_rate\":0,\"provider_timeout_after_commit_rate\":0}");
        Answer done = Eventually.await("a final answer for " + key, DEADLINE, () -> keep(pay(caller, key,
            "acct_outage", 900)), a -> a.status() != 409 && a.status() < 500);

        assertThat(failed.status()).as(fault + ": " + failed).isGreaterThanOrEqualTo(500);
        assertThat(done.status()).as(done.toString()).isEqualTo(201);
      }
    }

    /** Credentials the service must refuse without writing them anywhere. */
    private void strangers() {
      String unknownKey = "sk_live_unknown_" + token();
      String basic = "Basic " + Base64.getEncoder().encodeToString(("alice:pw_" + token())
          .getBytes(StandardCharsets.UTF_8));
      String scheme = "Token tok_" + token();
      secrets.key(unknownKey).authorization(basic).authorization(scheme);
      for (String authorization : List.of("Bearer " + unknownKey, basic, scheme)) {
        for (String path : List.of("/payments", "/admin/provider/stats", "/webhook-endpoints")) {
          HttpRequest.Builder b = HttpRequest.newBuilder(service.uri(path)).header("Authorization", authorization)
              .header("Idempotency-Key", UUID.randomUUID().toString()).header("Content-Type", "application/json");
          Answer refused = keep(service.send(b.POST(HttpRequest.BodyPublishers.ofString(
              "{\"account_id\":\"acct_x\",\"amount\":1,\"currency\":\"EUR\"}")).build()));
          assertThat(refused.status()).as(path + " with " + authorization).isIn(401, 405);
        }
      }
    }

    /** Genuine, re-sent and forged provider webhooks, each with an Authorization header it does not need. */
    private void providerWebhooks(WebhookSecret providerSecret) {
      String stray = "Bearer sk_stray_" + token();
      secrets.authorization(stray);
      WebhookSigner genuine = WebhookSigner.of(providerSecret);
      WebhookSigner forger = WebhookSigner.of(WebhookSecret.generate());
      for (int i = 0; i < 4; i++) {
        String id = UUID.randomUUID().toString();
        long now = System.currentTimeMillis() / 1000;
        byte[] body = ("{\"id\":\"" + id + "\",\"type\":\"charge.succeeded\",\"created\":\"2026-01-01T00:00:00Z\","
            + "\"data\":{\"id\":\"ch_secret_" + i + "_" + token() + "\",\"amount\":" + (10 + i) + "}}")
            .getBytes(StandardCharsets.UTF_8);
        WebhookSigner signer = i % 2 == 0 ? genuine : forger;
        for (int copy = 0; copy < 2; copy++) {
          Answer r = keep(service.send(HttpRequest.newBuilder(service.uri("/webhooks/provider"))
              .header("Content-Type", "application/json").header("Authorization", stray)
              .header("webhook-id", id).header("webhook-timestamp", Long.toString(now))
              .header("webhook-signature", signer.sign(id, now, body))
              .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build()));
          assertThat(r.status()).as(r.toString()).isEqualTo(signer == genuine ? 200 : 401);
        }
      }
    }

    /** The admin's views of records, events and inbox, which show what is stored. */
    Answer adminViews() {
      StringBuilder all = new StringBuilder();
      for (String path : List.of("/admin/idempotency-records?state=completed&limit=500",
          "/admin/outbox?status=delivered&limit=500", "/admin/outbox?status=dead&limit=500",
          "/admin/provider/webhooks", "/actuator/idempotency", "/admin/faults")) {
        Answer r = service.get(path, adminKey);
        assertThat(r.status()).as(path + ": " + r).isEqualTo(200);
        all.append(r.text()).append('\n');
      }
      return new Answer(200, null, all.toString().getBytes(StandardCharsets.UTF_8));
    }

    private String endpoint(Caller caller, Sink sink) {
      Answer created = service.post("/webhook-endpoints", caller.apiKey(), null,
          "{\"url\":\"" + sink.url() + "\",\"events\":[\"*\"]}");
      assertThat(created.status()).as(created.toString()).isEqualTo(201);
      secrets.endpoint(created.json().path("secret").asString());
      assertThat(SecretScan.scanText(created.text(), Set.of(created.json().path("secret").asString())))
          .as("the creation answers the secret, once").hasSize(1);
      return created.json().path("id").asString();
    }

    private void faults(String json) {
      Answer r = service.put("/admin/faults", adminKey, json);
      assertThat(r.status()).as(r.toString()).isEqualTo(200);
    }

    private Answer pay(Caller caller, String key, String account, long amount) {
      return service.post("/payments", caller.apiKey(), key,
          "{\"account_id\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}");
    }

    private Answer keep(Answer r) {
      answers.add(r.text());
      if (r.headers() != null) {
        answers.add(r.headers().map().toString());
      }
      return r;
    }
  }

  /** The secrets of a run, in the forms they could leak in. */
  private static final class Secrets {
    private final Set<String> plain = new LinkedHashSet<>();
    private final Set<String> endpoints = new LinkedHashSet<>();

    Secrets key(String apiKey) {
      plain.add(apiKey);
      return this;
    }

    Secrets authorization(String value) {
      plain.add(value);
      plain.add(value.substring(value.indexOf(' ') + 1));
      return this;
    }

    Secrets webhook(String whsec) {
      plain.addAll(forms(whsec));
      return this;
    }

    void endpoint(String whsec) {
      endpoints.addAll(forms(whsec));
    }

    private static Set<String> forms(String whsec) {
      String body = whsec.substring(WebhookSecret.PREFIX.length());
      return Set.of(whsec, body, HexFormat.of().formatHex(Base64.getDecoder().decode(body)));
    }

    Set<String> endpointSecrets() {
      return endpoints.stream().filter(s -> s.startsWith(WebhookSecret.PREFIX)).collect(Collectors.toSet());
    }

    /** Every form of the endpoints' secrets. */
    Set<String> endpointForms() {
      return Set.copyOf(endpoints);
    }

    Set<String> all() {
      Set<String> all = new LinkedHashSet<>(plain);
      all.addAll(endpoints);
      return all;
    }
  }

  /** A webhook endpoint on 127.0.0.1 that answers every request with one status and counts them. */
  private static final class Sink implements AutoCloseable {
    private final HttpServer server;
    private final AtomicInteger received = new AtomicInteger();

    private Sink(int status) throws IOException {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      server.createContext("/hook", exchange -> {
        try (InputStream in = exchange.getRequestBody()) {
          in.readAllBytes();
          received.incrementAndGet();
          exchange.sendResponseHeaders(status, -1);
        } finally {
          exchange.close();
        }
      });
      server.start();
    }

    static Sink start(int status) throws IOException {
      return new Sink(status);
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/hook";
    }

    int received() {
      return received.get();
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  private static String token() {
    byte[] bytes = new byte[18];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes).replace('-', 'x').replace('_', 'y');
  }
}
