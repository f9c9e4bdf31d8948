package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Completer;
import dev.idem.core.Idem;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.examples.payments.payment.PaymentPhases;
import dev.idem.examples.payments.refund.RefundPhases;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Payments and refunds whose provider call keeps failing past the resume cap (3 here) become uncertain: their key is
 * answered 409 {@code CONFLICT.idempotency.outcome_uncertain}, not retryable, with a link to the record, and nothing
 * runs. The service's reconcilers ask the provider by the call's key once it answers again (a charge it made resumes
 * the payment, which is then captured; none fails it), and operators resolve through the admin API, audited. Over
 * HTTP, against the service's own filter, store and Tomcat, on an H2 file database; the completer's rounds are run by
 * the test.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UncertainPaymentsTest {
  private static final int CAP = 3;
  private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  private final Caller alice = new Caller("sk_uncertain_alice_" + run, "alice");
  private RunningService service;

  @TempDir
  static Path data;

  @BeforeAll
  void start() {
    List<String> args = new ArrayList<>();
    args.add("--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE");
    args.add(alice.argument());
    args.add("--idem.completer.enabled=false");
    args.add("--idem.default-resume-cap-attempts=" + CAP);
    service = RunningService.start(args.toArray(String[]::new));
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  @AfterEach
  void providerBack() {
    faults("{\"provider_error_rate\":0,\"provider_timeout_after_commit_rate\":0}");
  }

  @Test
  void aPaymentWhoseProviderStaysDownIsUncertainAndTheReconcilerFailsItOnceTheProviderSaysItNeverCharged() {
    String key = "order-" + UUID.randomUUID();
    String account = "acct_down_" + run;
    faults("{\"provider_error_rate\":1}");
    for (int attempt = 1; attempt <= CAP; attempt++) {
      Answer down = pay(key, account, 500);
      assertThat(down.status()).as("attempt %d: %s", attempt, down).isEqualTo(503);
    }

    Answer uncertain = pay(key, account, 500);
    JsonNode listed = service.get("/admin/idempotency-records?state=uncertain&limit=500", null).json();
    String providerKey = providerKey(listed, key);
    Answer lookUpWhileDown = service.get("/provider/charges?idempotency_key=" + encode(providerKey), null);
    Completer.Reconciliation whileDown = completer().reconcileOnce();
    faults("{\"provider_error_rate\":0}");
    Answer lookUpBack = service.get("/provider/charges?idempotency_key=" + encode(providerKey), null);
    Completer.Reconciliation back = completer().reconcileOnce();
    Answer decided = pay(key, account, 500);

    assertThat(uncertain.status()).as(uncertain.toString()).isEqualTo(409);
    assertThat(uncertain.code()).isEqualTo("CONFLICT.idempotency.outcome_uncertain");
    assertThat(uncertain.json().path("retryable").asBoolean(true)).isFalse();
    String link = "/admin/idempotency-records/history?scope=alice&operation=POST+%2Fpayments&key=" + encode(key);
    assertThat(uncertain.json().path("record").asString()).isEqualTo(link);
    assertThat(uncertain.header("Link")).isEqualTo("<" + link + ">; rel=\"related\"");
    assertThat(lookUpWhileDown.status()).as(lookUpWhileDown.toString()).isEqualTo(503);
    assertThat(whileDown.unknown()).as("the provider could not be asked").isGreaterThanOrEqualTo(1);
    assertThat(lookUpBack.status()).as("the provider never charged: " + lookUpBack).isEqualTo(404);
    assertThat(back.failed()).isGreaterThanOrEqualTo(1);
    assertThat(decided.status()).as(decided.toString()).isEqualTo(422);
    assertThat(decided.code()).isEqualTo("PAYMENT.not_charged");
    assertThat(decided.header("Idempotency-Status")).isEqualTo("replayed");
    String paymentId = decided.json().path("payment_id").asString();
    assertThat(service.get("/payments/" + paymentId, alice.apiKey()).json().path("status").asString())
        .isEqualTo("failed");
    assertThat(service.get("/provider/charges?account_id=" + account, null).json().path("charges").size()).isZero();
    JsonNode history = service.get(link, null).json().path("history");
    assertThat(history.size()).isEqualTo(1);
    assertThat(history.get(0).path("actor").asString()).isEqualTo("reconciler 'payments'");
    assertThat(history.get(0).path("to").asString()).isEqualTo("failed");
  }

  @Test
  void aChargeAppliedButNeverAnsweredIsUncertainThenResumedByTheReconcilerAndCapturedOnce() {
    String key = "order-" + UUID.randomUUID();
    String account = "acct_lost_" + run;
    faults("{\"provider_timeout_after_commit_rate\":1}");
    for (int attempt = 1; attempt <= CAP; attempt++) {
      Answer lost = pay(key, account, 700);
      assertThat(lost.status()).as("attempt %d: %s", attempt, lost).isEqualTo(504);
    }
    Answer uncertain = pay(key, account, 700);
    faults("{\"provider_timeout_after_commit_rate\":0}");

    Completer completer = completer();
    Completer.Reconciliation reconciled = completer.reconcileOnce();
    Completer.Round round = completer.runOnce();
    Answer decided = pay(key, account, 700);

    assertThat(uncertain.status()).as(uncertain.toString()).isEqualTo(409);
    assertThat(reconciled.resumed()).isGreaterThanOrEqualTo(1);
    assertThat(round.recovered()).isGreaterThanOrEqualTo(1);
    assertThat(decided.status()).as(decided.toString()).isEqualTo(201);
    assertThat(decided.header("Idempotency-Status")).isEqualTo("replayed");
    assertThat(decided.json().path("status").asString()).isEqualTo("captured");
    assertThat(service.get("/provider/charges?account_id=" + account, null).json().path("charges").size())
        .as("charged once, whatever the attempts").isEqualTo(1);
  }

  @Test
  void anOperatorCompletesAnUncertainPaymentThroughTheAdminApiWithAReasonAndTheAuditNamesThem() {
    String key = "order-" + UUID.randomUUID();
    String account = "acct_operator_" + run;
    faults("{\"provider_error_rate\":1}");
    for (int attempt = 1; attempt <= CAP; attempt++) {
      pay(key, account, 900);
    }
    String where = "?scope=alice&operation=" + encode(PaymentPhases.OPERATION) + "&key=" + encode(key);

    Answer noReason = service.post("/admin/idempotency-records/resolve" + where, null, null,
        "{\"action\":\"complete\",\"status\":201,\"body\":{}}");
    Answer resolved = service.post("/admin/idempotency-records/resolve" + where, null, null,
        "{\"action\":\"complete\",\"status\":201,\"body\":{\"status\":\"captured_by_hand\"},"
            + "\"reason\":\"the provider's dashboard shows the charge\",\"operator\":\"alice.ops\"}");
    Answer again = service.post("/admin/idempotency-records/resolve" + where, null, null,
        "{\"action\":\"retry\",\"reason\":\"once more\"}");
    Answer replay = pay(key, account, 900);
    Answer history = service.get("/admin/idempotency-records/history" + where, null);

    assertThat(noReason.status()).as(noReason.toString()).isEqualTo(400);
    assertThat(resolved.status()).as(resolved.toString()).isEqualTo(200);
    assertThat(resolved.json().path("actor").asString()).isEqualTo("alice.ops via admin@127.0.0.1");
    assertThat(resolved.json().path("from").asString()).isEqualTo("uncertain");
    assertThat(resolved.json().path("to").asString()).isEqualTo("completed");
    assertThat(again.status()).as(again.toString()).isEqualTo(409);
    assertThat(again.code()).isEqualTo("CONFLICT.record.not_uncertain");
    assertThat(replay.status()).as(replay.toString()).isEqualTo(201);
    assertThat(replay.json().path("status").asString()).isEqualTo("captured_by_hand");
    assertThat(history.json().path("history").size()).isEqualTo(1);
    assertThat(history.json().path("history").get(0).path("reason").asString())
        .isEqualTo("the provider's dashboard shows the charge");
  }

  @Test
  void anUncertainRefundTheProviderNeverMadeIsFailedAndItsAmountIsRefundableAgain() {
    Answer paid = pay("pay-" + UUID.randomUUID(), "acct_refund_" + run, 1000);
    assertThat(paid.status()).as(paid.toString()).isEqualTo(201);
    String paymentId = paid.json().path("id").asString();
    String key = "refund-" + UUID.randomUUID();
    faults("{\"provider_error_rate\":1}");
    for (int attempt = 1; attempt <= CAP; attempt++) {
      refund(key, paymentId, 400);
    }
    Answer uncertain = refund(key, paymentId, 400);
    faults("{\"provider_error_rate\":0}");

    Completer.Reconciliation reconciled = completer().reconcileOnce();
    Answer decided = refund(key, paymentId, 400);
    JsonNode payment = service.get("/payments/" + paymentId, alice.apiKey()).json();

    assertThat(uncertain.status()).as(uncertain.toString()).isEqualTo(409);
    assertThat(reconciled.failed()).isGreaterThanOrEqualTo(1);
    assertThat(decided.status()).as(decided.toString()).isEqualTo(422);
    assertThat(decided.code()).isEqualTo("REFUND.not_made");
    assertThat(service.get("/refunds/" + decided.json().path("refund_id").asString(), alice.apiKey()).json()
        .path("status").asString()).isEqualTo("failed");
    assertThat(payment.path("refunded_amount").asLong()).as("the reservation was given back").isZero();
    Idem idem = service.context().getBean(Idem.class);
    assertThat(idem.store().find(RecordKey.of(alice.tenant(), RefundPhases.OPERATION, key)).orElseThrow().state())
        .isEqualTo(RecordState.FAILED);
  }

  private Completer completer() {
    return service.context().getBean(Idem.class).completer().batchSize(1000).build();
  }

  private void faults(String json) {
    Answer set = service.put("/admin/faults", null, json);
    assertThat(set.status()).as(set.toString()).isEqualTo(200);
  }

  private Answer pay(String key, String account, long amount) {
    return service.post("/payments", alice.apiKey(), key,
        "{\"account_id\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}");
  }

  private Answer refund(String key, String paymentId, long amount) {
    return service.post("/refunds", alice.apiKey(), key,
        "{\"payment_id\":\"" + paymentId + "\",\"amount\":" + amount + "}");
  }

  private static String providerKey(JsonNode listed, String key) {
    for (JsonNode r : listed.path("records")) {
      if (r.path("key").asString().equals(key)) {
        return r.path("provider_key").asString();
      }
    }
    throw new AssertionError("no uncertain record of key " + key + " in " + listed);
  }

  private static String encode(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
