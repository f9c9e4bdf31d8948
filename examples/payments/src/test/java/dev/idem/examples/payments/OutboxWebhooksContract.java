package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookSigner;
import dev.idem.test.Eventually;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * The outbox, webhooks and inbox of the payments service, over real HTTP, mixed into {@link PaymentsServiceContract}
 * so that they run on each database against the service that contract started. Tenants' endpoints are
 * {@link WebhookSink}s on 127.0.0.1 that verify every signature; each test subscribes endpoints of its own and judges
 * only what reached them, so that endpoints left by earlier tests do not matter. Asynchronous delivery is awaited
 * with {@link Eventually}, never slept for.
 */
interface OutboxWebhooksContract {
  Duration DEADLINE = Duration.ofSeconds(60);
  /** The provider's webhook secret in these runs: a test can sign a genuine provider webhook. */
  String PROVIDER_SECRET = "whsec_" + Base64.getEncoder().encodeToString(
      "payments-contract-provider-secret".getBytes(StandardCharsets.US_ASCII));
  int MAX_ATTEMPTS = 3;
  String PROVIDER_DESTINATION = "provider-webhook:merchant";

  /**
   * The relay's settings in these runs: a short poll, few attempts with backoff of 0.5 to 1 s (long enough to see an
   * event pending between attempts), and every provider webhook sent twice.
   */
  static List<String> args() {
    return List.of("--payments.outbox.poll-interval=50ms", "--payments.outbox.max-attempts=" + MAX_ATTEMPTS,
        "--payments.outbox.backoff-initial=1s", "--payments.outbox.backoff-max=1s",
        "--payments.provider.webhook-resend-ratio=1.0", "--payments.provider.webhook-secret=" + PROVIDER_SECRET);
  }

  RunningService service();

  Caller firstTenant();

  Caller secondTenant();

  // ---------------------------------------------------------------- events to tenants

  @Test
  default void paymentDeclineAndRefundEventsReachTheSubscribedEndpointsOnce() {
    Caller alice = firstTenant();
    try (WebhookSink all = WebhookSink.start(); WebhookSink paymentsOnly = WebhookSink.start()) {
      String allId = subscribe(alice, all, "[\"*\"]");
      String paymentsOnlyId = subscribe(alice, paymentsOnly, "[\"payment.succeeded\"]");
      String account = PaymentsServiceContract.account("hooks");
      String key = PaymentsServiceContract.key();

      Answer paid = pay(alice, key, account, 1500);
      Answer replayed = pay(alice, key, account, 1500);
      Answer declined = pay(alice, PaymentsServiceContract.key(), "acct_declined_" + PaymentsServiceContract.suffix(),
          300);
      String paymentId = paid.json().path("id").asString();
      String declinedId = declined.json().path("payment_id").asString();
      Answer refunded = refund(alice, PaymentsServiceContract.key(), paymentId, 500);
      String refundId = refunded.json().path("id").asString();
      awaitAllDelivered("webhook:" + allId, 3);
      awaitAllDelivered("webhook:" + paymentsOnlyId, 1);

      assertThat(paid.status()).as(paid.toString()).isEqualTo(201);
      assertThat(replayed.header("Idempotency-Status")).isEqualTo("replayed");
      assertThat(declined.status()).as(declined.toString()).isEqualTo(402);
      assertThat(refunded.status()).as(refunded.toString()).isEqualTo(201);
      WebhookSink.Delivery succeeded = single(all.accepted(paymentId));
      assertThat(succeeded.type()).isEqualTo("payment.succeeded");
      assertThat(succeeded.webhookId()).isEqualTo(succeeded.payload().path("id").asString());
      assertThat(succeeded.payload().path("created").asString()).isNotEmpty();
      assertThat(succeeded.payload().path("data").path("status").asString()).isEqualTo("captured");
      assertThat(succeeded.payload().path("data").path("amount").asLong()).isEqualTo(1500);
      WebhookSink.Delivery declinedEvent = single(all.accepted(declinedId));
      assertThat(declinedEvent.type()).isEqualTo("payment.declined");
      assertThat(declinedEvent.payload().path("data").path("status").asString()).isEqualTo("declined");
      WebhookSink.Delivery refundEvent = single(all.accepted(refundId));
      assertThat(refundEvent.type()).isEqualTo("refund.succeeded");
      assertThat(refundEvent.payload().path("data").path("payment_id").asString()).isEqualTo(paymentId);
      assertThat(refundEvent.payload().path("data").path("amount").asLong()).isEqualTo(500);
      for (WebhookSink.Delivery d : List.of(succeeded, declinedEvent, refundEvent)) {
        assertThat(d.webhookId()).isEqualTo(d.payload().path("id").asString());
      }
      assertThat(Set.of(succeeded.webhookId(), declinedEvent.webhookId(), refundEvent.webhookId())).hasSize(3);
      assertThat(all.deliveries()).allMatch(WebhookSink.Delivery::verified);
      assertThat(single(paymentsOnly.accepted(paymentId)).type()).isEqualTo("payment.succeeded");
      assertThat(paymentsOnly.deliveries()).as("only payment.succeeded is subscribed").hasSize(1);
      assertThat(outboxRows(paymentId, "webhook:" + allId)).as("the replay wrote no second event").isEqualTo(1);
      assertThat(service().count("SELECT COUNT(*) FROM idem_outbox WHERE destination = ?", "webhook:" + allId))
          .isEqualTo(3);
    }
  }

  @Test
  default void aPaymentOfATenantWithoutEndpointsWritesNoEvent() {
    Caller bob = secondTenant();

    Answer paid = pay(bob, PaymentsServiceContract.key(), PaymentsServiceContract.account("quiet"), 100);

    assertThat(paid.status()).isEqualTo(201);
    assertThat(service().count("SELECT COUNT(*) FROM idem_outbox WHERE aggregate_id = ?",
        paid.json().path("id").asString())).isZero();
  }

  @Test
  default void anEventIsWrittenOnlyIfTheTransactionThatDecidesItCommits() {
    Caller alice = firstTenant();
    try (WebhookSink sink = WebhookSink.start()) {
      String endpoint = "webhook:" + subscribe(alice, sink, "[\"payment.succeeded\"]");
      String account = PaymentsServiceContract.account("rollback");
      String key = PaymentsServiceContract.key();
      service().put("/admin/faults", null, "{\"provider_error_rate\":1}");
      Answer outage = pay(alice, key, account, 800);
      String paymentId = outage.json().path("payment_id").asString();
      service().put("/admin/faults", null, "{\"provider_error_rate\":0}");
      String blocker = "le_block_" + PaymentsServiceContract.suffix();
      execute("INSERT INTO pay_ledger_entry (id, tenant, account_id, direction, amount, currency, reference_type,"
          + " reference_id, created_at) VALUES (?, ?, 'acct_block', 'debit', 1, 'EUR', 'payment', ?, 0)",
          blocker, alice.tenant(), paymentId);

      Answer failed = Eventually.await("the capture fails on the blocked ledger pair", DEADLINE,
          () -> pay(alice, key, account, 800), a -> a.status() == 500);
      long rowsAfterRollback = service().count("SELECT COUNT(*) FROM idem_outbox WHERE aggregate_id = ?", paymentId);
      String statusAfterRollback = service().get("/payments/" + paymentId, alice.apiKey()).json().path("status")
          .asString();
      execute("DELETE FROM pay_ledger_entry WHERE id = ?", blocker);
      Answer done = Eventually.await("a final answer for key " + key, DEADLINE, () -> pay(alice, key, account, 800),
          a -> a.status() != 409 && a.status() < 500);
      awaitAllDelivered(endpoint, 1);

      assertThat(outage.status()).isEqualTo(503);
      assertThat(failed.code()).isEqualTo("INTERNAL.error");
      assertThat(rowsAfterRollback).as("the rolled-back capture left no event").isZero();
      assertThat(statusAfterRollback).isEqualTo("pending");
      assertThat(done.status()).as(done.toString()).isEqualTo(201);
      assertThat(done.json().path("id").asString()).isEqualTo(paymentId);
      assertThat(outboxRows(paymentId, endpoint)).isEqualTo(1);
      assertThat(single(sink.accepted(paymentId)).type()).isEqualTo("payment.succeeded");
    }
  }

  // ---------------------------------------------------------------- failing endpoints, operators

  @Test
  default void anEndpointAnswering500KeepsItsEventsPendingThenDeadAndAReplayDeliversThem() {
    Caller alice = firstTenant();
    try (WebhookSink sink = WebhookSink.start()) {
      sink.answer(500);
      String endpoint = "webhook:" + subscribe(alice, sink, "[\"payment.succeeded\"]");
      String first = pay(alice, PaymentsServiceContract.key(), PaymentsServiceContract.account("e500"), 111)
          .json().path("id").asString();
      String second = pay(alice, PaymentsServiceContract.key(), PaymentsServiceContract.account("e500"), 222)
          .json().path("id").asString();
      String firstEvent = eventId(first, endpoint);
      String secondEvent = eventId(second, endpoint);

      JsonNode pending = Eventually.await("a failed attempt in the history of a pending event", DEADLINE,
          () -> outboxEvent(firstEvent), e -> e.path("status").asString().equals("pending")
              && e.path("history").size() >= 1);
      JsonNode dead = Eventually.await("the event dead after " + MAX_ATTEMPTS + " attempts", DEADLINE,
          () -> outboxEvent(firstEvent), e -> e.path("status").asString().equals("dead"));
      Eventually.await("the second event dead", DEADLINE, () -> outboxEvent(secondEvent),
          e -> e.path("status").asString().equals("dead"));
      List<String> listed = listAll("dead", "payment.succeeded");

      assertThat(pending.path("destination").asString()).isEqualTo(endpoint);
      assertThat(pending.path("type").asString()).isEqualTo("payment.succeeded");
      assertThat(pending.path("payload").path("id").asString()).isEqualTo(firstEvent);
      assertThat(pending.path("history").get(0).path("response_code").asInt()).isEqualTo(500);
      assertThat(pending.path("history").get(0).path("error").asString()).contains("500");
      assertThat(dead.path("attempts").asInt()).isEqualTo(MAX_ATTEMPTS);
      assertThat(dead.path("history").size()).isEqualTo(MAX_ATTEMPTS);
      dead.path("history").forEach(a -> assertThat(a.path("response_code").asInt()).isEqualTo(500));
      assertThat(listed).contains(firstEvent, secondEvent);
      assertThat(sink.accepted(first)).isEmpty();

      sink.answer(200);
      Answer replayed = service().post("/admin/outbox/" + firstEvent + "/replay", null, null, "");
      assertThat(replayed.status()).as(replayed.toString()).isEqualTo(200);
      assertThat(replayed.json().path("status").asString()).isIn("pending", "delivered");
      JsonNode delivered = Eventually.await("the replayed event delivered", DEADLINE, () -> outboxEvent(firstEvent),
          e -> e.path("status").asString().equals("delivered"));
      assertThat(single(sink.accepted(first)).webhookId()).isEqualTo(firstEvent);
      assertThat(delivered.path("attempts").asInt()).isEqualTo(MAX_ATTEMPTS + 1);
      assertThat(delivered.path("attempts_since_replay").asInt()).isEqualTo(1);
      assertThat(delivered.path("history").size()).as("the history survives the replay").isEqualTo(MAX_ATTEMPTS);

      Answer bulk = service().post("/admin/outbox/replay?status=dead&type=payment.succeeded", null, null, "");
      assertThat(bulk.status()).as(bulk.toString()).isEqualTo(200);
      assertThat(bulk.json().path("replayed").asInt()).isGreaterThanOrEqualTo(1);
      Eventually.await("the bulk-replayed event delivered", DEADLINE, () -> outboxEvent(secondEvent),
          e -> e.path("status").asString().equals("delivered"));
      assertThat(single(sink.accepted(second)).webhookId()).isEqualTo(secondEvent);
    }
  }

  @Test
  default void outboxAdminRoutesAnswer404ForUnknownEventsAnd400ForBadQueries() {
    String unknown = UUID.randomUUID().toString();

    assertThat(service().get("/admin/outbox/" + unknown, null).status()).isEqualTo(404);
    assertThat(service().get("/admin/outbox/not-an-id", null).status()).isEqualTo(404);
    assertThat(service().post("/admin/outbox/" + unknown + "/replay", null, null, "").code())
        .isEqualTo("NOT_FOUND.outbox_event");
    assertThat(service().post("/admin/outbox/" + unknown + "/discard", null, null, "").status()).isEqualTo(404);
    assertThat(service().get("/admin/outbox?status=lost", null).code()).isEqualTo("VALIDATION.status");
    assertThat(service().get("/admin/outbox?status=dead&cursor=abc", null).code()).isEqualTo("VALIDATION.cursor");
    assertThat(service().get("/admin/outbox?status=dead&limit=0", null).code()).isEqualTo("VALIDATION.limit");
    assertThat(service().get("/admin/outbox?status=dead&limit=x", null).code()).isEqualTo("VALIDATION.limit");
    assertThat(service().post("/admin/outbox/replay", null, null, "").code()).isEqualTo("VALIDATION.status");
    assertThat(service().post("/admin/outbox/replay?status=pending", null, null, "").code())
        .isEqualTo("VALIDATION.status");
    Answer stats = service().get("/admin/outbox/stats", null);
    assertThat(stats.status()).isEqualTo(200);
    assertThat(stats.json().path("counts").has("dead")).isTrue();
    assertThat(stats.json().path("relay_running").asBoolean()).isTrue();
  }

  @Test
  default void anEndpointAnswering410IsDisabledAndItsEventDies() {
    Caller alice = firstTenant();
    try (WebhookSink sink = WebhookSink.start()) {
      sink.answer(410);
      String endpointId = subscribe(alice, sink, "[\"*\"]");
      String endpoint = "webhook:" + endpointId;
      String first = pay(alice, PaymentsServiceContract.key(), PaymentsServiceContract.account("gone"), 410)
          .json().path("id").asString();
      String event = eventId(first, endpoint);

      JsonNode dead = Eventually.await("the event dead at once", DEADLINE, () -> outboxEvent(event),
          e -> e.path("status").asString().equals("dead"));
      JsonNode disabled = Eventually.await("the endpoint disabled", DEADLINE,
          () -> service().get("/webhook-endpoints/" + endpointId, alice.apiKey()).json(),
          e -> !e.path("enabled").asBoolean(true));
      String second = pay(alice, PaymentsServiceContract.key(), PaymentsServiceContract.account("gone"), 411)
          .json().path("id").asString();
      boolean listedDisabled = false;
      for (JsonNode e : service().get("/webhook-endpoints", alice.apiKey()).json().path("webhook_endpoints")) {
        if (e.path("id").asString().equals(endpointId)) {
          listedDisabled = !e.path("enabled").asBoolean(true);
        }
      }

      assertThat(dead.path("attempts").asInt()).isEqualTo(1);
      assertThat(dead.path("history").get(0).path("response_code").asInt()).isEqualTo(410);
      assertThat(disabled.path("disabled_reason").asString()).contains("410");
      assertThat(listedDisabled).as("GET /webhook-endpoints shows it disabled").isTrue();
      assertThat(sink.about(first)).as("a 410 is never retried").hasSize(1);
      assertThat(outboxRows(second, endpoint)).as("a disabled endpoint gets no new events").isZero();

      Answer discarded = service().post("/admin/outbox/" + event + "/discard", null, null, "");
      Answer again = service().post("/admin/outbox/" + event + "/discard", null, null, "");
      assertThat(discarded.status()).as(discarded.toString()).isEqualTo(200);
      assertThat(discarded.json().path("status").asString()).isEqualTo("discarded");
      assertThat(again.status()).isEqualTo(409);
      assertThat(again.code()).isEqualTo("CONFLICT.outbox.finished");
    }
  }

  // ---------------------------------------------------------------- endpoints

  @Test
  default void webhookEndpointsAreValidatedAndPrivateToTheirTenant() {
    Caller alice = firstTenant();
    Caller bob = secondTenant();

    Answer created = service().post("/webhook-endpoints", alice.apiKey(), null,
        "{\"url\":\"http://127.0.0.1:9/private\",\"events\":[\"refund.succeeded\",\"refund.succeeded\"]}");
    String id = created.json().path("id").asString();
    Answer alicesList = service().get("/webhook-endpoints", alice.apiKey());
    Answer bobsList = service().get("/webhook-endpoints", bob.apiKey());
    Answer bobReads = service().get("/webhook-endpoints/" + id, bob.apiKey());
    Answer aliceReads = service().get("/webhook-endpoints/" + id, alice.apiKey());

    assertThat(created.status()).as(created.toString()).isEqualTo(201);
    assertThat(id).startsWith("we_");
    assertThat(created.json().path("secret").asString()).startsWith("whsec_");
    assertThat(created.json().path("url").asString()).isEqualTo("http://127.0.0.1:9/private");
    assertThat(created.json().path("events").toString()).isEqualTo("[\"refund.succeeded\"]");
    assertThat(created.header("Location")).isEqualTo("/webhook-endpoints/" + id);
    assertThat(ids(alicesList)).contains(id);
    alicesList.json().path("webhook_endpoints").forEach(e -> assertThat(e.has("secret")).isFalse());
    assertThat(ids(bobsList)).doesNotContain(id);
    assertThat(bobReads.status()).isEqualTo(404);
    assertThat(aliceReads.status()).isEqualTo(200);
    assertThat(aliceReads.json().has("secret")).isFalse();
    assertThat(aliceReads.json().path("enabled").asBoolean()).isTrue();

    String self = service().uri("/admin/outbox/replay?status=delivered").toString();
    Answer selfTargeted = service().post("/webhook-endpoints", alice.apiKey(), null,
        "{\"url\":\"" + self + "\",\"events\":[\"*\"]}");
    assertThat(selfTargeted.status()).as("the relay must never call this service's own routes").isEqualTo(400);
    assertThat(selfTargeted.text()).contains("this service itself");

    String[][] refused = {
        {"{\"url\":\"ftp://127.0.0.1/x\",\"events\":[\"*\"]}", "VALIDATION.url"},
        {"{\"url\":\"/relative\",\"events\":[\"*\"]}", "VALIDATION.url"},
        {"{\"url\":\"http://127.0.0.1/" + "a".repeat(2050) + "\",\"events\":[\"*\"]}", "VALIDATION.url"},
        {"{\"url\":\"http://exa mple\",\"events\":[\"*\"]}", "VALIDATION.url"},
        {"{\"events\":[\"*\"]}", "VALIDATION.url"},
        {"{\"url\":\"http://127.0.0.1:9/x\",\"events\":[]}", "VALIDATION.events"},
        {"{\"url\":\"http://127.0.0.1:9/x\",\"events\":[\"payment.exploded\"]}", "VALIDATION.events"},
        {"{\"url\":\"http://127.0.0.1:9/x\",\"events\":\"payment.succeeded\"}", "VALIDATION.events"},
        {"{\"url\":\"http://127.0.0.1:9/x\"}", "VALIDATION.events"},
    };
    for (String[] c : refused) {
      Answer a = service().post("/webhook-endpoints", alice.apiKey(), null, c[0]);
      assertThat(a.status()).as(c[0]).isEqualTo(400);
      assertThat(a.code()).as(c[0]).isEqualTo(c[1]);
    }
    // ambiguous numeric hosts are refused as written even here, where private addresses are allowed; each of these
    // reads as 127.0.0.1 or as no host at all, so none could reach off this machine
    for (String url : List.of("http://127.1:9/x", "http://2130706433:9/x", "http://0x7f.0.0.1:9/x",
        "http://127.0.0.01:9/x", "http://127.0.0.1.:9/x")) {
      Answer a = service().post("/webhook-endpoints", alice.apiKey(), null,
          "{\"url\":\"" + url + "\",\"events\":[\"*\"]}");
      assertThat(a.code()).as(url).isEqualTo("VALIDATION.url");
      assertThat(a.json().path("detail").asString()).as(url).contains("ambiguous numeric form");
    }
    assertThat(service().post("/webhook-endpoints", null, null, "{\"url\":\"http://127.0.0.1:9/x\"}").status())
        .isEqualTo(401);
    assertThat(service().get("/webhook-endpoints", null).status()).isEqualTo(401);
  }

  // ---------------------------------------------------------------- the provider's webhooks, through the inbox

  @Test
  default void theProvidersWebhooksArriveTwiceAndTakeEffectOnce() {
    Caller alice = firstTenant();
    JsonNode before = service().get("/admin/provider/webhooks", null).json();

    JsonNode payment = pay(alice, PaymentsServiceContract.key(), PaymentsServiceContract.account("confirm"), 900)
        .json();
    JsonNode refund = refund(alice, PaymentsServiceContract.key(), payment.path("id").asString(), 300).json();
    String chargeId = payment.path("provider_charge_id").asString();
    String refundId = refund.path("provider_refund_id").asString();
    List<String> events = new ArrayList<>();
    for (String objectId : List.of(chargeId, refundId)) {
      String event = eventId(objectId, PROVIDER_DESTINATION);
      Eventually.await("provider webhook " + event + " delivered", DEADLINE,
          () -> service().text("SELECT status FROM idem_outbox WHERE id = ?", event), "delivered"::equals);
      events.add(event);
    }
    JsonNode after = service().get("/admin/provider/webhooks", null).json();

    assertThat(chargeId).startsWith("ch_");
    assertThat(refundId).startsWith("re_");
    for (String event : events) {
      assertThat(service().count("SELECT COUNT(*) FROM idem_inbox WHERE consumer = ? AND event_id = ?",
          "provider-webhooks", event)).as("inbox records of " + event).isEqualTo(1);
    }
    assertThat(confirmations(chargeId)).as("charge confirmed once").isEqualTo(1);
    assertThat(confirmations(refundId)).as("refund confirmed once").isEqualTo(1);
    assertThat(service().text("SELECT event_type FROM pay_provider_confirmation WHERE provider_object_id = ?",
        refundId)).isEqualTo("refund.succeeded");
    assertThat(after.path("resent").asLong() - before.path("resent").asLong()).isGreaterThanOrEqualTo(2);
    assertThat(after.path("inbox_duplicates").asLong() - before.path("inbox_duplicates").asLong())
        .as("every webhook arrived twice; the second was dropped").isGreaterThanOrEqualTo(2);
    assertThat(after.path("inbox_payload_mismatches").asLong())
        .isEqualTo(before.path("inbox_payload_mismatches").asLong());
  }

  @Test
  default void aForgedOrStaleProviderWebhookIs401AndStoresNothing() {
    String id = UUID.randomUUID().toString();
    String objectId = "ch_signed_" + PaymentsServiceContract.suffix();
    byte[] body = ("{\"id\":\"" + id + "\",\"type\":\"charge.succeeded\",\"created\":\"2026-01-01T00:00:00Z\","
        + "\"data\":{\"id\":\"" + objectId + "\",\"amount\":77}}").getBytes(StandardCharsets.UTF_8);
    byte[] tampered = new String(body, StandardCharsets.UTF_8).replace("77", "78").getBytes(StandardCharsets.UTF_8);
    WebhookSecret genuine = WebhookSecret.parse(PROVIDER_SECRET);
    long now = System.currentTimeMillis() / 1000;

    Answer forged = providerWebhook(id, now, WebhookSigner.of(WebhookSecret.generate()).sign(id, now, body), body);
    Answer stale = providerWebhook(id, now - 600, WebhookSigner.of(genuine).sign(id, now - 600, body), body);
    Answer altered = providerWebhook(id, now, WebhookSigner.of(genuine).sign(id, now, body), tampered);
    Answer unsigned = service().send(service().request("/webhooks/provider", null)
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    long storedAfterRefusals = service().count("SELECT COUNT(*) FROM idem_inbox WHERE event_id = ?", id)
        + confirmations(objectId);
    Answer accepted = providerWebhook(id, now, WebhookSigner.of(genuine).sign(id, now, body), body);
    Answer again = providerWebhook(id, now, WebhookSigner.of(genuine).sign(id, now, body), body);
    Answer reused = providerWebhook(id, now, WebhookSigner.of(genuine).sign(id, now, tampered), tampered);

    for (Answer refused : List.of(forged, stale, altered, unsigned)) {
      assertThat(refused.status()).as(refused.toString()).isEqualTo(401);
      assertThat(refused.code()).isEqualTo("AUTH.webhook_signature");
      assertThat(refused.contentType()).isEqualTo("application/problem+json");
    }
    assertThat(storedAfterRefusals).as("nothing stored for refused webhooks").isZero();
    assertThat(accepted.status()).as("no API key needed: the signature authenticates").isEqualTo(200);
    assertThat(accepted.json().path("duplicate").asBoolean()).isFalse();
    assertThat(again.status()).isEqualTo(200);
    assertThat(again.json().path("duplicate").asBoolean()).isTrue();
    assertThat(again.json().path("result").asString()).isEqualTo(accepted.json().path("result").asString());
    assertThat(reused.status()).isEqualTo(409);
    assertThat(reused.code()).isEqualTo("CONFLICT.webhook.payload_mismatch");
    assertThat(confirmations(objectId)).isEqualTo(1);
    assertThat(service().text("SELECT amount FROM pay_provider_confirmation WHERE provider_object_id = ?", objectId))
        .isEqualTo("77");
  }

  // ---------------------------------------------------------------- helpers

  private Answer pay(Caller caller, String key, String account, long amount) {
    return service().post("/payments", caller.apiKey(), key, PaymentsServiceContract.body(account, amount));
  }

  private Answer refund(Caller caller, String key, String paymentId, long amount) {
    return service().post("/refunds", caller.apiKey(), key,
        "{\"payment_id\":\"" + paymentId + "\",\"amount\":" + amount + "}");
  }

  /** Creates an endpoint for the sink and hands the sink its secret; returns the endpoint id. */
  private String subscribe(Caller caller, WebhookSink sink, String events) {
    Answer created = service().post("/webhook-endpoints", caller.apiKey(), null,
        "{\"url\":\"" + sink.url() + "\",\"events\":" + events + "}");
    assertThat(created.status()).as(created.toString()).isEqualTo(201);
    sink.secret(created.json().path("secret").asString());
    return created.json().path("id").asString();
  }

  private Answer providerWebhook(String id, long timestamp, String signature, byte[] body) {
    return service().send(service().request("/webhooks/provider", null)
        .header("Content-Type", "application/json").header("webhook-id", id)
        .header("webhook-timestamp", Long.toString(timestamp)).header("webhook-signature", signature)
        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
  }

  private long outboxRows(String aggregateId, String destination) {
    return service().count("SELECT COUNT(*) FROM idem_outbox WHERE aggregate_id = ? AND destination = ?",
        aggregateId, destination);
  }

  /** The id of the one event about {@code aggregateId} to {@code destination}, once it is committed. */
  private String eventId(String aggregateId, String destination) {
    return Eventually.await("the event about " + aggregateId + " to " + destination, DEADLINE,
        () -> service().text("SELECT id FROM idem_outbox WHERE aggregate_id = ? AND destination = ?", aggregateId,
            destination), v -> v != null).trim();
  }

  private void awaitAllDelivered(String destination, int expected) {
    Eventually.await(expected + " events to " + destination + " delivered", DEADLINE,
        () -> service().count("SELECT COUNT(*) FROM idem_outbox WHERE destination = ? AND status = 'delivered'",
            destination), n -> n >= expected);
  }

  private JsonNode outboxEvent(String id) {
    Answer a = service().get("/admin/outbox/" + id, null);
    assertThat(a.status()).as(a.toString()).isEqualTo(200);
    return a.json();
  }

  /** Every event id in a listing, following the cursor two events at a time. */
  private List<String> listAll(String status, String type) {
    List<String> ids = new ArrayList<>();
    Set<String> cursors = new HashSet<>();
    String cursor = "";
    for (int pages = 0; pages < 10_000; pages++) {
      Answer page = service().get("/admin/outbox?status=" + status + "&type=" + type + "&limit=2&cursor=" + cursor,
          null);
      assertThat(page.status()).as(page.toString()).isEqualTo(200);
      JsonNode events = page.json().path("events");
      assertThat(events.size()).isLessThanOrEqualTo(2);
      events.forEach(e -> {
        assertThat(e.path("status").asString()).isEqualTo(status);
        assertThat(e.path("type").asString()).isEqualTo(type);
        ids.add(e.path("id").asString());
      });
      JsonNode next = page.json().path("next");
      if (next.isNull() || next.isMissingNode()) {
        return ids;
      }
      cursor = next.asString();
      assertThat(cursors.add(cursor)).as("cursors move forward").isTrue();
    }
    throw new AssertionError("the listing did not end");
  }

  private long confirmations(String objectId) {
    return service().count("SELECT COALESCE(SUM(confirmations), 0) FROM pay_provider_confirmation"
        + " WHERE provider_object_id = ?", objectId);
  }

  private void execute(String sql, Object... params) {
    try (java.sql.Connection c = service().context().getBean(javax.sql.DataSource.class).getConnection();
        java.sql.PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      ps.executeUpdate();
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  private static List<String> ids(Answer list) {
    List<String> ids = new ArrayList<>();
    list.json().path("webhook_endpoints").forEach(e -> ids.add(e.path("id").asString()));
    return ids;
  }

  private static <T> T single(List<T> items) {
    assertThat(items).hasSize(1);
    return items.get(0);
  }
}
