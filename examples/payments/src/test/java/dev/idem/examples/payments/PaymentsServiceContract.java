package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;

/**
 * The payments service's HTTP API, over real HTTP against the application started in this JVM. Each database runs
 * it in a subclass that starts the service on a database of its own ({@link #service}) with two tenants
 * ({@link #alice()}, {@link #bob()}). Tests use their own accounts and keys and compare provider counters before and
 * after, so they do not depend on each other or on earlier runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class PaymentsServiceContract implements OutboxWebhooksContract, ConditionalRequestsContract {
  /**
   * Settings every run uses: a fast completer and a short lease, so recoveries happen within a test, and the relay
   * settings of {@link OutboxWebhooksContract#args()}.
   */
  static final List<String> COMMON_ARGS = java.util.stream.Stream.concat(
      java.util.stream.Stream.of("--idem.completer.interval=200ms", "--idem.default-lease=5s"),
      OutboxWebhooksContract.args().stream()).toList();
  static final Duration DEADLINE = Duration.ofSeconds(60);
  private static final String NO_FAULTS =
      "{\"provider_timeout_after_commit_rate\":0,\"provider_error_rate\":0,\"provider_latency_ms\":0,"
      + "\"provider_refusal_rate\":0}";

  RunningService service;

  abstract Caller alice();

  abstract Caller bob();

  @Override
  public RunningService service() {
    return service;
  }

  @Override
  public Caller firstTenant() {
    return alice();
  }

  @Override
  public Caller secondTenant() {
    return bob();
  }

  @AfterEach
  void healProvider() {
    if (service != null) {
      assertThat(service.put("/admin/faults", null, NO_FAULTS).status()).isEqualTo(200);
    }
  }

  // ---------------------------------------------------------------- authentication and plain errors

  @Test
  void requestsWithoutAKnownApiKeyAre401Problems() {
    Answer none = service.post("/payments", null, key(), body(account("auth"), 100));
    Answer unknown = service.post("/payments", "sk_nobody", key(), body(account("auth"), 100));
    Answer ledger = service.get("/ledger/summary", null);
    Answer payment = service.get("/payments/pay_x", "sk_nobody");

    for (Answer a : List.of(none, unknown, ledger, payment)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(401);
      assertThat(a.contentType()).isEqualTo("application/problem+json");
      assertThat(a.code()).isEqualTo("AUTH.unauthenticated");
      assertThat(a.json().path("retryable").asBoolean()).isFalse();
    }
    assertThat(service.get("/actuator/health", null).status()).isEqualTo(200);
    assertThat(service.get("/provider/charges/ch_none", null).status()).isEqualTo(404);
  }

  @Test
  void clientMistakesOutsideTheHandlersAreProblemsNeverServerErrors() {
    String apiKey = alice().apiKey();

    Answer unknownRoute = service.get("/nope", apiKey);
    Answer wrongMethod = service.send(service.request("/payments", apiKey).DELETE().build());
    Answer noKey = service.post("/payments", apiKey, null, body(account("plain"), 100));
    Answer malformed = service.post("/payments", apiKey, key(), "{\"amount\":");
    Answer textBody = service.send(service.request("/payments", apiKey).header("Idempotency-Key", key())
        .header("Content-Type", "text/plain").POST(java.net.http.HttpRequest.BodyPublishers.ofString("hi")).build());
    Answer badLimit = service.get("/ledger?limit=abc", apiKey);

    assertThat(unknownRoute.status()).isEqualTo(404);
    assertThat(unknownRoute.code()).isEqualTo("NOT_FOUND.route");
    assertThat(wrongMethod.status()).isEqualTo(405);
    assertThat(noKey.status()).isEqualTo(400);
    assertThat(noKey.code()).isEqualTo("VALIDATION.idempotency_key_missing");
    assertThat(malformed.status()).isEqualTo(400);
    assertThat(malformed.code()).isEqualTo("VALIDATION.malformed_json");
    assertThat(textBody.status()).isEqualTo(415);
    assertThat(textBody.code()).isEqualTo("VALIDATION.media_type");
    assertThat(badLimit.status()).isEqualTo(400);
    assertThat(badLimit.code()).isEqualTo("VALIDATION.limit");
    for (Answer a : List.of(unknownRoute, wrongMethod, noKey, malformed, textBody, badLimit)) {
      assertThat(a.contentType()).as(a.toString()).isEqualTo("application/problem+json");
    }
  }

  // ---------------------------------------------------------------- payments

  @Test
  void badInputIsAClear4xxAndNothingIsStoredOrCharged() throws Exception {
    Caller caller = alice();
    String account = account("bad-input");
    String tooLong = "k".repeat(256);
    String[] keys = {key(), key(), key(), key()};
    JsonNode before = stats();

    Answer oversized = service.post("/payments", caller.apiKey(), keys[0],
        "{\"account_id\":\"" + account + "\",\"amount\":1,\"currency\":\"EUR\",\"description\":\""
            + "x".repeat(70_000) + "\"}");
    Answer longKey = service.post("/payments", caller.apiKey(), tooLong, body(account, 100));
    Answer twoKeys = service.send(service.request("/payments", caller.apiKey()).header("Idempotency-Key", keys[1])
        .header("Idempotency-Key", keys[2]).header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body(account, 100))).build());
    Answer wrongType = service.post("/payments", caller.apiKey(), keys[3],
        "{\"account_id\":\"" + account + "\",\"amount\":\"100\",\"currency\":\"EUR\"}");
    Answer noAuth = service.post("/payments", null, key(), body(account, 100));
    String controlChar = rawPost(caller.apiKey(), "bad\u0001key", body(account, 100));

    assertThat(oversized.status()).isEqualTo(413);
    assertThat(oversized.code()).isEqualTo("VALIDATION.request_too_large");
    assertThat(longKey.status()).isEqualTo(400);
    assertThat(longKey.code()).isEqualTo("VALIDATION.idempotency_key_invalid");
    assertThat(twoKeys.status()).isEqualTo(400);
    assertThat(twoKeys.code()).isEqualTo("VALIDATION.idempotency_key_invalid");
    assertThat(wrongType.status()).isEqualTo(400);
    assertThat(wrongType.code()).isEqualTo("VALIDATION.amount");
    assertThat(noAuth.status()).isEqualTo(401);
    assertThat(controlChar).as("the container refuses the header before the application").startsWith("HTTP/1.1 400");
    for (Answer a : List.of(oversized, longKey, twoKeys, wrongType, noAuth)) {
      assertThat(a.contentType()).as(a.toString()).isEqualTo("application/problem+json");
    }
    assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", account)).isZero();
    assertThat(stats().path("charges").asLong()).isEqualTo(before.path("charges").asLong());
    for (String k : keys) {
      assertThat(service.count("SELECT COUNT(*) FROM idem_record WHERE idem_key = ?", k)).as(k).isZero();
    }
    Answer corrected = pay(caller, keys[3], account, 100);
    assertThat(corrected.status()).as("the refused key is still free").isEqualTo(201);
  }

  /** A request that java.net.http refuses to build: a header value with a control character. */
  private String rawPost(String apiKey, String idempotencyKey, String json) throws Exception {
    byte[] bytes = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    java.net.URI uri = service.uri("/payments");
    try (java.net.Socket socket = new java.net.Socket("127.0.0.1", uri.getPort())) {
      socket.setSoTimeout(30_000);
      String head = "POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer "
          + apiKey + "\r\nContent-Type: application/json\r\nIdempotency-Key: " + idempotencyKey
          + "\r\nContent-Length: " + bytes.length + "\r\n\r\n";
      socket.getOutputStream().write(head.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
      socket.getOutputStream().write(bytes);
      socket.getOutputStream().flush();
      return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }


  @Test
  void aPaymentIsCapturedOnceAndItsReplayIsByteIdentical() {
    String account = account("once");
    String key = key();
    JsonNode before = stats();

    Answer first = pay(alice(), key, account, 1250);
    Answer replay = pay(alice(), key, account, 1250);

    assertThat(first.status()).as(first.toString()).isEqualTo(201);
    assertThat(first.header("Idempotency-Status")).isEqualTo("stored");
    assertThat(first.header("Idempotency-Key")).isEqualTo(key);
    JsonNode payment = first.json();
    assertThat(payment.path("id").asString()).startsWith("pay_");
    assertThat(payment.path("account_id").asString()).isEqualTo(account);
    assertThat(payment.path("amount").asLong()).isEqualTo(1250);
    assertThat(payment.path("currency").asString()).isEqualTo("EUR");
    assertThat(payment.path("status").asString()).isEqualTo("captured");
    assertThat(payment.path("provider_charge_id").asString()).startsWith("ch_");
    assertThat(payment.path("created_at").asString()).isNotEmpty();
    assertThat(replay.status()).isEqualTo(201);
    assertThat(replay.header("Idempotency-Status")).isEqualTo("replayed");
    assertThat(replay.header("Idempotent-Replayed")).isEqualTo("true");
    assertThat(replay.body()).isEqualTo(first.body());
    Answer read = service.send(service.request("/payments/" + payment.path("id").asString(), alice().apiKey())
        .header("Idempotency-Key", key).GET().build());
    assertThat(read.status()).isEqualTo(200);
    assertThat(read.json().path("status").asString()).isEqualTo("captured");
    assertThat(read.header("Idempotency-Status")).as("GET is untouched").isNull();
    Answer otherBody = pay(alice(), key, account, 1251);
    assertThat(otherBody.status()).isEqualTo(422);
    assertThat(otherBody.code()).isEqualTo("CONFLICT.idempotency.payload_mismatch");
    assertThat(otherBody.json().path("fields").toString()).contains("amount");
    assertThat(chargesOf(account)).isEqualTo(1);
    assertThat(stats().path("charges").asLong() - before.path("charges").asLong()).isEqualTo(1);
    assertThat(ledgerOf(alice(), account)).hasSize(1);
  }

  @Test
  void wrongJsonTypesAreRefusedBeforeTheKeyIsUsed() {
    String account = account("types");
    String key = key();
    String[][] cases = {
        {"{\"account_id\":\"" + account + "\",\"amount\":\"abc\",\"currency\":\"EUR\"}", "VALIDATION.amount"},
        {"{\"account_id\":\"" + account + "\",\"amount\":1.5,\"currency\":\"EUR\"}", "VALIDATION.amount"},
        {"{\"account_id\":7,\"amount\":100,\"currency\":\"EUR\"}", "VALIDATION.account_id"},
        {"{\"account_id\":\"" + account + "\",\"amount\":100,\"currency\":978}", "VALIDATION.currency"},
        {"[1,2]", "VALIDATION.body"},
    };

    for (String[] c : cases) {
      Answer refused = service.post("/payments", alice().apiKey(), key, c[0]);
      assertThat(refused.status()).as(c[0]).isEqualTo(400);
      assertThat(refused.code()).isEqualTo(c[1]);
      assertThat(refused.header("Idempotency-Status")).isNull();
      assertThat(refused.contentType()).isEqualTo("application/problem+json");
    }
    Answer corrected = pay(alice(), key, account, 100);

    assertThat(corrected.status()).as(corrected.toString()).isEqualTo(201);
    assertThat(corrected.header("Idempotency-Status")).isEqualTo("stored");
  }

  @Test
  void invalidValuesAreKeptAndReplayed() {
    String account = account("values");
    String key = key();
    String zero = "{\"account_id\":\"" + account + "\",\"amount\":0,\"currency\":\"EUR\"}";

    Answer first = service.post("/payments", alice().apiKey(), key, zero);
    Answer replay = service.post("/payments", alice().apiKey(), key, zero);
    Answer corrected = pay(alice(), key, account, 100);
    Answer noCurrency = service.post("/payments", alice().apiKey(), key(),
        "{\"account_id\":\"" + account + "\",\"amount\":5}");
    Answer lowerCase = service.post("/payments", alice().apiKey(), key(),
        "{\"account_id\":\"" + account + "\",\"amount\":5,\"currency\":\"eur\"}");

    assertThat(first.status()).isEqualTo(400);
    assertThat(first.code()).isEqualTo("VALIDATION.amount");
    assertThat(first.header("Idempotency-Status")).isEqualTo("stored");
    assertThat(replay.header("Idempotency-Status")).isEqualTo("replayed");
    assertThat(replay.body()).isEqualTo(first.body());
    assertThat(corrected.status()).isEqualTo(422);
    assertThat(corrected.code()).isEqualTo("CONFLICT.idempotency.payload_mismatch");
    assertThat(noCurrency.code()).isEqualTo("VALIDATION.currency");
    assertThat(lowerCase.code()).isEqualTo("VALIDATION.currency");
    assertThat(chargesOf(account)).isZero();
  }

  @Test
  void aDeclinedPaymentIs402KeptAndReplayed() {
    String account = "acct_declined_" + suffix();
    String key = key();

    Answer first = pay(alice(), key, account, 700);
    Answer replay = pay(alice(), key, account, 700);

    assertThat(first.status()).as(first.toString()).isEqualTo(402);
    assertThat(first.code()).isEqualTo("PAYMENT.declined");
    assertThat(first.header("Idempotency-Status")).isEqualTo("stored");
    assertThat(first.json().path("retryable").asBoolean()).isFalse();
    assertThat(replay.status()).isEqualTo(402);
    assertThat(replay.header("Idempotency-Status")).isEqualTo("replayed");
    assertThat(replay.body()).isEqualTo(first.body());
    String paymentId = first.json().path("payment_id").asString();
    assertThat(service.get("/payments/" + paymentId, alice().apiKey()).json().path("status").asString())
        .isEqualTo("declined");
    assertThat(chargesOf(account)).isEqualTo(1);
    assertThat(ledgerOf(alice(), account)).isEmpty();
  }

  @Test
  void theSameKeyInAnotherTenantIsAnIndependentPayment() {
    String account = account("scopes");
    String key = key();

    Answer forAlice = pay(alice(), key, account, 300);
    Answer forBob = pay(bob(), key, account, 300);

    assertThat(forAlice.status()).isEqualTo(201);
    assertThat(forBob.status()).isEqualTo(201);
    assertThat(forBob.header("Idempotency-Status")).isEqualTo("stored");
    assertThat(forBob.json().path("id").asString()).isNotEqualTo(forAlice.json().path("id").asString());
    assertThat(chargesOf(account)).isEqualTo(2);
    String alicesPayment = forAlice.json().path("id").asString();
    String bobsPayment = forBob.json().path("id").asString();
    assertThat(service.get("/payments/" + alicesPayment, bob().apiKey()).status()).isEqualTo(404);
    assertThat(service.get("/payments/" + bobsPayment, alice().apiKey()).status()).isEqualTo(404);
    assertThat(service.get("/payments/" + alicesPayment, alice().apiKey()).status()).isEqualTo(200);
    assertThat(service.get("/payments/" + bobsPayment, bob().apiKey()).status()).isEqualTo(200);
  }

  // ---------------------------------------------------------------- refunds

  @Test
  void refundsBookTheReversePairAndNeverExceedThePayment() {
    String account = account("refunds");
    JsonNode payment = pay(alice(), key(), account, 1000).json();
    String paymentId = payment.path("id").asString();
    String exceedingKey = key();

    Answer part = refund(alice(), key(), paymentId, 400);
    Answer tooMuch = refund(alice(), exceedingKey, paymentId, 601);
    Answer tooMuchAgain = refund(alice(), exceedingKey, paymentId, 601);
    Answer rest = refund(alice(), key(), paymentId, 600);
    Answer beyond = refund(alice(), key(), paymentId, 1);

    assertThat(part.status()).as(part.toString()).isEqualTo(201);
    JsonNode refund = part.json();
    assertThat(refund.path("id").asString()).startsWith("rf_");
    assertThat(refund.path("payment_id").asString()).isEqualTo(paymentId);
    assertThat(refund.path("amount").asLong()).isEqualTo(400);
    assertThat(refund.path("status").asString()).isEqualTo("succeeded");
    assertThat(refund.path("provider_refund_id").asString()).startsWith("re_");
    assertThat(tooMuch.status()).isEqualTo(422);
    assertThat(tooMuch.code()).isEqualTo("VALIDATION.refund_exceeds_payment");
    assertThat(tooMuch.header("Idempotency-Status")).isEqualTo("stored");
    assertThat(tooMuchAgain.header("Idempotency-Status")).isEqualTo("replayed");
    assertThat(tooMuchAgain.body()).isEqualTo(tooMuch.body());
    assertThat(rest.status()).isEqualTo(201);
    assertThat(beyond.status()).isEqualTo(422);
    Answer read = service.get("/refunds/" + refund.path("id").asString(), alice().apiKey());
    assertThat(read.status()).isEqualTo(200);
    assertThat(read.json().path("amount").asLong()).isEqualTo(400);
    assertThat(service.get("/payments/" + paymentId, alice().apiKey()).json().path("refunded_amount").asLong())
        .isEqualTo(1000);
    List<JsonNode> entries = ledgerOf(alice(), account);
    assertThat(entries).extracting(e -> e.path("direction").asString() + " " + e.path("amount").asLong()
        + " " + e.path("reference_type").asString())
        .containsExactlyInAnyOrder("debit 1000 payment", "credit 400 refund", "credit 600 refund");
  }

  @Test
  void refundsOfUnknownOrAnotherTenantsPaymentsAre404() {
    String paymentId = pay(alice(), key(), account("foreign"), 500).json().path("id").asString();
    String refundId = refund(alice(), key(), paymentId, 100).json().path("id").asString();

    Answer unknown = refund(alice(), key(), "pay_unknown", 100);
    Answer foreign = refund(bob(), key(), paymentId, 100);
    Answer foreignPayment = service.get("/payments/" + paymentId, bob().apiKey());
    Answer foreignRefund = service.get("/refunds/" + refundId, bob().apiKey());

    for (Answer a : List.of(unknown, foreign)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(404);
      assertThat(a.code()).isEqualTo("NOT_FOUND.payment");
      assertThat(a.header("Idempotency-Status")).isEqualTo("stored");
    }
    assertThat(foreignPayment.status()).isEqualTo(404);
    assertThat(foreignPayment.code()).isEqualTo("NOT_FOUND.payment");
    assertThat(foreignRefund.status()).isEqualTo(404);
    assertThat(foreignRefund.code()).isEqualTo("NOT_FOUND.refund");
    assertThat(service.get("/payments/" + paymentId, alice().apiKey()).json().path("refunded_amount").asLong())
        .isEqualTo(100);
  }

  @Test
  void aDeclinedPaymentCannotBeRefunded() {
    String paymentId = pay(alice(), key(), "acct_declined_" + suffix(), 300).json().path("payment_id").asString();

    Answer refused = refund(alice(), key(), paymentId, 100);

    assertThat(refused.status()).as(refused.toString()).isEqualTo(422);
    assertThat(refused.code()).isEqualTo("VALIDATION.payment_not_refundable");
    assertThat(refused.header("Idempotency-Status")).isEqualTo("stored");
  }

  @Test
  void concurrentRefundsWithDifferentKeysNeverExceedThePayment() throws Exception {
    String account = account("refund-race");
    String paymentId = pay(alice(), key(), account, 1000).json().path("id").asString();

    List<Answer> answers = concurrently(10, i -> refund(alice(), key(), paymentId, 300));

    assertThat(answers).filteredOn(a -> a.status() == 201).hasSize(3);
    assertThat(answers).filteredOn(a -> a.status() == 422)
        .hasSize(7).allSatisfy(a -> assertThat(a.code()).isEqualTo("VALIDATION.refund_exceeds_payment"));
    assertThat(service.get("/payments/" + paymentId, alice().apiKey()).json().path("refunded_amount").asLong())
        .isEqualTo(900);
    assertThat(ledgerOf(alice(), account)).hasSize(4);
  }

  // ---------------------------------------------------------------- ledger

  @Test
  void theLedgerSummaryAgreesWithPaymentsAndRefunds() {
    String account = account("ledger");
    JsonNode before = summary(bob());

    String first = pay(bob(), key(), account, 100).json().path("id").asString();
    pay(bob(), key(), account, 250);
    pay(bob(), key(), "acct_declined_" + suffix(), 999);
    refund(bob(), key(), first, 40);
    JsonNode after = summary(bob());

    assertThat(after.path("payments").asLong() - before.path("payments").asLong()).isEqualTo(2);
    assertThat(after.path("refunds").asLong() - before.path("refunds").asLong()).isEqualTo(1);
    assertThat(after.path("captured_amount").asLong() - before.path("captured_amount").asLong()).isEqualTo(350);
    assertThat(after.path("refunded_amount").asLong() - before.path("refunded_amount").asLong()).isEqualTo(40);
    assertThat(after.path("entries").asLong() - before.path("entries").asLong()).isEqualTo(6);
    assertThat(after.path("entries").asLong())
        .isEqualTo(2 * (after.path("payments").asLong() + after.path("refunds").asLong()));
    assertThat(after.path("balanced").asBoolean()).isTrue();
    assertThat(ledgerOf(bob(), account)).hasSize(3);
    assertThat(ledgerOf(alice(), account)).isEmpty();
  }

  @Test
  void aSecondLedgerPairForOnePaymentIsImpossible() {
    String paymentId = pay(alice(), key(), account("pair"), 100).json().path("id").asString();

    Throwable refused = null;
    try (java.sql.Connection c = service.context().getBean(javax.sql.DataSource.class).getConnection();
        java.sql.PreparedStatement ps = c.prepareStatement("INSERT INTO pay_ledger_entry (id, tenant, account_id,"
            + " direction, amount, currency, reference_type, reference_id, created_at)"
            + " VALUES (?, ?, ?, 'debit', 100, 'EUR', 'payment', ?, 0)")) {
      ps.setString(1, "le_" + suffix());
      ps.setString(2, alice().tenant());
      ps.setString(3, "acct_other");
      ps.setString(4, paymentId);
      ps.executeUpdate();
    } catch (java.sql.SQLException e) {
      refused = e;
    }

    assertThat(refused).isNotNull();
    assertThat(((java.sql.SQLException) refused).getSQLState()).startsWith("23");
  }

  @Test
  void aBrowserPageOnTheServicesMachineGetsNoLoopbackExemption() {
    java.net.http.HttpRequest.Builder replayAll = service.request("/admin/outbox/replay?status=delivered", null)
        .POST(java.net.http.HttpRequest.BodyPublishers.noBody());
    Answer crossSite = service.send(replayAll.copy().header("Origin", "https://attacker.example").build());
    Answer fetched = service.send(service.request("/admin/faults", null).header("Sec-Fetch-Site", "cross-site")
        .GET().build());
    Answer typedIn = service.send(service.request("/admin/faults", null).header("Sec-Fetch-Site", "none")
        .GET().build());
    Answer withKey = service.send(service.request("/admin/faults", null).header("Origin", "https://attacker.example")
        .header("Authorization", "Bearer sk_admin").GET().build());

    String rebound = rawGet("/admin/outbox/stats", "evil.example");
    String local = rawGet("/admin/outbox/stats", "localhost");

    assertThat(rebound).as("a page whose host name was rebound to 127.0.0.1").startsWith("HTTP/1.1 401");
    assertThat(local).startsWith("HTTP/1.1 200");
    assertThat(crossSite.status()).as(crossSite.toString()).isEqualTo(401);
    assertThat(fetched.status()).as(fetched.toString()).isEqualTo(401);
    assertThat(typedIn.status()).as("a page the user opened by its address").isEqualTo(200);
    assertThat(withKey.status()).as(withKey.toString()).isEqualTo(200);
  }

  /** A GET over a plain socket, to send a Host header that Java's HTTP client will not let us set. */
  private String rawGet(String path, String host) {
    java.net.URI base = service.uri("/");
    try (java.net.Socket socket = new java.net.Socket(base.getHost(), base.getPort())) {
      socket.setSoTimeout(10_000);
      String request = "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
      socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      return new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("GET " + path + " with Host " + host + " failed: " + e, e);
    }
  }

  // ---------------------------------------------------------------- provider, faults, recovery

  @Test
  void faultsAreValidatedAndProviderStatsReported() {
    Answer set = service.put("/admin/faults", null, "{\"provider_latency_ms\":5}");
    Answer read = service.get("/admin/faults", null);
    Answer rateTooHigh = service.put("/admin/faults", null, "{\"provider_error_rate\":1.5}");
    Answer notANumber = service.put("/admin/faults", null, "{\"provider_timeout_after_commit_rate\":\"x\"}");
    Answer negativeLatency = service.put("/admin/faults", null, "{\"provider_latency_ms\":-1}");
    Answer refusalTooHigh = service.put("/admin/faults", null, "{\"provider_refusal_rate\":1.5}");
    Answer unknownField = service.put("/admin/faults", null, "{\"provider_chaos\":1}");
    Answer stats = service.get("/admin/provider/stats", null);

    assertThat(set.status()).isEqualTo(200);
    assertThat(read.json().path("provider_latency_ms").asLong()).isEqualTo(5);
    assertThat(read.json().path("provider_error_rate").asDouble()).isZero();
    assertThat(rateTooHigh.code()).isEqualTo("VALIDATION.provider_error_rate");
    assertThat(notANumber.code()).isEqualTo("VALIDATION.provider_timeout_after_commit_rate");
    assertThat(negativeLatency.code()).isEqualTo("VALIDATION.provider_latency_ms");
    assertThat(refusalTooHigh.code()).isEqualTo("VALIDATION.provider_refusal_rate");
    assertThat(read.json().path("provider_refusal_rate").isNumber()).isTrue();
    assertThat(unknownField.code()).isEqualTo("VALIDATION.provider_chaos");
    for (Answer a : List.of(rateTooHigh, notANumber, negativeLatency, refusalTooHigh, unknownField)) {
      assertThat(a.status()).isEqualTo(400);
    }
    assertThat(service.get("/admin/faults", null).json().path("provider_latency_ms").asLong()).isEqualTo(5);
    assertThat(stats.status()).isEqualTo(200);
    for (String field : List.of("charges", "refunds", "duplicate_charge_attempts")) {
      assertThat(stats.json().has(field)).as(field).isTrue();
    }
  }

  @Test
  void theProviderIsIdempotentOnItsOwnKeys() {
    String account = account("provider");
    String providerKey = key();
    String charge = "{\"account_id\":\"" + account + "\",\"amount\":42,\"currency\":\"EUR\"}";
    JsonNode before = stats();

    Answer first = service.post("/provider/charges", null, providerKey, charge);
    Answer again = service.post("/provider/charges", null, providerKey, charge);
    Answer reused = service.post("/provider/charges", null, providerKey,
        "{\"account_id\":\"" + account + "\",\"amount\":43,\"currency\":\"EUR\"}");

    assertThat(first.status()).isEqualTo(201);
    assertThat(again.status()).isEqualTo(200);
    assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
    assertThat(again.json().path("id").asString()).isEqualTo(first.json().path("id").asString());
    assertThat(reused.status()).isEqualTo(422);
    assertThat(reused.code()).isEqualTo("PROVIDER.idempotency_key_reused");
    JsonNode after = stats();
    assertThat(after.path("charges").asLong() - before.path("charges").asLong()).isEqualTo(1);
    assertThat(after.path("duplicate_charge_attempts").asLong()
        - before.path("duplicate_charge_attempts").asLong()).isEqualTo(1);
  }

  @Test
  void aProviderOutageIsNotKeptAndTheRetryResumesTheSamePayment() {
    String account = account("outage");
    String key = key();
    service.put("/admin/faults", null, "{\"provider_error_rate\":1}");

    Answer outage = pay(alice(), key, account, 900);
    service.put("/admin/faults", null, NO_FAULTS);
    Answer retried = payUntilFinal(alice(), key, account, 900);

    assertThat(outage.status()).as(outage.toString()).isEqualTo(503);
    assertThat(outage.code()).isEqualTo("DEPENDENCY.unavailable");
    assertThat(outage.json().path("retryable").asBoolean()).isTrue();
    assertThat(outage.header("Idempotency-Status")).isNull();
    assertThat(outage.header("Retry-After")).isNotNull();
    assertThat(retried.status()).as(retried.toString()).isEqualTo(201);
    assertThat(retried.json().path("id").asString()).isEqualTo(outage.json().path("payment_id").asString());
    assertThat(chargesOf(account)).isEqualTo(1);
    assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", account)).isEqualTo(1);
  }

  @Test
  void aTimeoutAfterTheProviderCommittedChargesOnceAcrossRetries() {
    String account = account("timeout");
    String key = key();
    JsonNode before = stats();
    service.put("/admin/faults", null, "{\"provider_timeout_after_commit_rate\":1}");

    Answer timedOut = pay(alice(), key, account, 4200);
    service.put("/admin/faults", null, NO_FAULTS);
    Answer retried = payUntilFinal(alice(), key, account, 4200);
    Answer replayed = pay(alice(), key, account, 4200);

    assertThat(timedOut.status()).as(timedOut.toString()).isEqualTo(504);
    assertThat(timedOut.code()).isEqualTo("DEPENDENCY.timeout");
    assertThat(timedOut.json().path("retryable").asBoolean()).isTrue();
    assertThat(timedOut.header("Idempotency-Status")).isNull();
    assertThat(retried.status()).as(retried.toString()).isEqualTo(201);
    assertThat(retried.json().path("id").asString()).isEqualTo(timedOut.json().path("payment_id").asString());
    assertThat(replayed.body()).isEqualTo(retried.body());
    assertThat(chargesOf(account)).isEqualTo(1);
    JsonNode after = stats();
    assertThat(after.path("charges").asLong() - before.path("charges").asLong()).isEqualTo(1);
    assertThat(after.path("duplicate_charge_attempts").asLong()
        - before.path("duplicate_charge_attempts").asLong()).isGreaterThanOrEqualTo(1);
    assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", account)).isEqualTo(1);
    assertThat(ledgerOf(alice(), account)).hasSize(1);
  }

  @Test
  void theCompleterFinishesAPaymentItsClientAbandoned() {
    String account = account("abandoned");
    String key = key();
    service.put("/admin/faults", null, "{\"provider_error_rate\":1}");
    Answer outage = pay(alice(), key, account, 640);
    String paymentId = outage.json().path("payment_id").asString();
    service.put("/admin/faults", null, NO_FAULTS);

    JsonNode finished = Eventually.await("the completer captures payment " + paymentId, DEADLINE,
        () -> service.get("/payments/" + paymentId, alice().apiKey()).json(),
        p -> p.path("status").asString().equals("captured"));
    Answer returning = payUntilFinal(alice(), key, account, 640);

    assertThat(outage.status()).isEqualTo(503);
    assertThat(finished.path("provider_charge_id").asString()).startsWith("ch_");
    assertThat(returning.status()).isEqualTo(201);
    assertThat(returning.json().path("id").asString()).isEqualTo(paymentId);
    assertThat(chargesOf(account)).isEqualTo(1);
    assertThat(ledgerOf(alice(), account)).hasSize(1);
  }

  @Test
  void sixtyFourConcurrentRequestsWithOneKeyMakeOnePayment() throws Exception {
    String account = account("race");
    String key = key();
    JsonNode before = stats();

    List<Answer> answers = concurrently(64, i -> pay(alice(), key, account, 6400));
    Answer last = payUntilFinal(alice(), key, account, 6400);

    assertThat(last.status()).isEqualTo(201);
    for (Answer a : answers) {
      if (a.status() == 201) {
        assertThat(a.body()).isEqualTo(last.body());
      } else {
        assertThat(a.status()).as(a.toString()).isEqualTo(409);
        assertThat(a.code()).isEqualTo("CONFLICT.idempotency.in_progress");
        assertThat(a.header("Retry-After")).isNotNull();
      }
    }
    assertThat(answers).anyMatch(a -> a.status() == 201);
    String paymentId = last.json().path("id").asString();
    assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", account)).isEqualTo(1);
    assertThat(service.count("SELECT COUNT(*) FROM pay_ledger_entry WHERE reference_id = ?", paymentId))
        .isEqualTo(2);
    assertThat(chargesOf(account)).isEqualTo(1);
    assertThat(stats().path("charges").asLong() - before.path("charges").asLong()).isEqualTo(1);
  }

  // ---------------------------------------------------------------- admin

  @Test
  void idempotencyRecordsArePagedWithACursor() {
    Set<String> mine = new HashSet<>();
    for (int i = 0; i < 3; i++) {
      String key = "page-" + suffix();
      mine.add(key);
      service.post("/payments", alice().apiKey(), key, "{\"account_id\":\"acct_x\",\"amount\":-1,\"currency\":\"EUR\"}");
    }

    List<JsonNode> seen = new ArrayList<>();
    Set<String> identities = new HashSet<>();
    String after = "";
    int pages = 0;
    do {
      Answer page = service.get("/admin/idempotency-records?state=failed&limit=2&after=" + after, null);
      assertThat(page.status()).as(page.toString()).isEqualTo(200);
      JsonNode records = page.json().path("records");
      assertThat(records.size()).isLessThanOrEqualTo(2);
      for (JsonNode r : records) {
        seen.add(r);
        assertThat(identities.add(r.path("scope").asString() + "|" + r.path("operation").asString() + "|"
            + r.path("key").asString())).isTrue();
      }
      JsonNode next = page.json().path("next");
      after = next.isNull() || next.isMissingNode() ? null : next.asString();
      pages++;
    } while (after != null && pages < 10_000);

    assertThat(after).isNull();
    List<JsonNode> ours = seen.stream().filter(r -> r.path("scope").asString().equals(alice().tenant())
        && mine.contains(r.path("key").asString())).toList();
    assertThat(ours).hasSize(3).allSatisfy(r -> {
      assertThat(r.path("operation").asString()).isEqualTo("POST /payments");
      assertThat(r.path("state").asString()).isEqualTo("failed");
      assertThat(r.path("response_status").asInt()).isEqualTo(400);
      assertThat(r.path("created_at").asString()).isNotEmpty();
      assertThat(r.path("expires_at").asString()).isNotEmpty();
      assertThat(r.has("lease_owner")).isTrue();
      assertThat(r.has("locked_until")).isTrue();
      assertThat(r.has("recovery_point")).isTrue();
    });
    assertThat(service.get("/admin/idempotency-records?state=in_progress", null).status()).isEqualTo(200);
    assertThat(service.get("/admin/idempotency-records?state=nope", null).code()).isEqualTo("VALIDATION.state");
  }

  // ---------------------------------------------------------------- helpers

  static String key() {
    return UUID.randomUUID().toString();
  }

  static String suffix() {
    return UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  static String account(String name) {
    return "acct_" + name + "_" + suffix();
  }

  static String body(String account, long amount) {
    return "{\"account_id\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}";
  }

  Answer pay(Caller caller, String key, String account, long amount) {
    return service.post("/payments", caller.apiKey(), key, body(account, amount));
  }

  /** Sends the payment again until the answer is final (not 409 in progress, not a transient 5xx). */
  Answer payUntilFinal(Caller caller, String key, String account, long amount) {
    return Eventually.await("a final answer for key " + key, DEADLINE, () -> pay(caller, key, account, amount),
        a -> a.status() != 409 && a.status() < 500);
  }

  Answer refund(Caller caller, String key, String paymentId, long amount) {
    return service.post("/refunds", caller.apiKey(), key,
        "{\"payment_id\":\"" + paymentId + "\",\"amount\":" + amount + "}");
  }

  JsonNode stats() {
    return service.get("/admin/provider/stats", null).json();
  }

  JsonNode summary(Caller caller) {
    Answer a = service.get("/ledger/summary", caller.apiKey());
    assertThat(a.status()).isEqualTo(200);
    return a.json();
  }

  long chargesOf(String account) {
    return service.get("/provider/charges?account_id=" + account, null).json().path("charges").size();
  }

  List<JsonNode> ledgerOf(Caller caller, String account) {
    Answer a = service.get("/ledger?account_id=" + account, caller.apiKey());
    assertThat(a.status()).isEqualTo(200);
    List<JsonNode> out = new ArrayList<>();
    a.json().path("entries").forEach(out::add);
    return out;
  }

  interface Call {
    Answer run(int i);
  }

  /** Runs the calls on their own threads, released together, and returns every answer. */
  static List<Answer> concurrently(int n, Call call) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      CountDownLatch ready = new CountDownLatch(n);
      CountDownLatch go = new CountDownLatch(1);
      List<Future<Answer>> futures = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        int index = i;
        futures.add(pool.submit(() -> {
          ready.countDown();
          go.await();
          return call.run(index);
        }));
      }
      ready.await();
      go.countDown();
      List<Answer> answers = new ArrayList<>();
      for (Future<Answer> f : futures) {
        answers.add(f.get());
      }
      return answers;
    } finally {
      pool.shutdownNow();
    }
  }

  static String[] args(String... specific) {
    List<String> all = new ArrayList<>(COMMON_ARGS);
    all.addAll(Arrays.asList(specific));
    return all.toArray(String[]::new);
  }
}
