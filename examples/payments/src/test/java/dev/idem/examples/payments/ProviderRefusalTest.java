package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.Idem;
import dev.idem.core.IdempotencyRecord;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.examples.payments.payment.PaymentPhases;
import dev.idem.examples.payments.refund.RefundPhases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile callers and the provider keys the service derives. An outsider who computes the provider key of a payment or
 * a refund from its tenant, route and client key, and uses it first, changes nothing: keys carry the record's own
 * random nonce. A record claimed before nonces existed keeps the old, computable derivation (so that it resumes with
 * the key it already sent); when an outsider used that key first, the provider refuses the call for good
 * ({@code PROVIDER.idempotency_key_reused}), and the operation ends FAILED with a kept 422 problem that says it is not
 * retryable, what it reserved is given back (the payment is marked failed; the refund's amount is free again), and no
 * completer round touches the record again. Over HTTP, against the service's own filter, store and Tomcat, on an H2
 * file database; {@link PostgresProviderRefusalTest} runs it on PostgreSQL.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProviderRefusalTest {
  private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  final Caller alice = new Caller("sk_refusal_alice_" + run, "alice");
  private static final String FAULTS =
      "{\"provider_timeout_after_commit_rate\":0,\"provider_error_rate\":%d,\"provider_latency_ms\":0}";
  RunningService service;

  @TempDir
  static Path data;

  /** The database arguments of this run. */
  List<String> database() {
    return List.of("--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments")
        + ";WRITE_DELAY=0;AUTO_SERVER=FALSE");
  }

  /** Closes what {@link #database()} opened; nothing for H2. */
  void closeDatabase() {}

  @BeforeAll
  void start() {
    List<String> args = new ArrayList<>(database());
    args.add(alice.argument());
    // no background completer: a round between two steps of a test would resume its record; tests run rounds
    args.add("--idem.completer.enabled=false");
    service = RunningService.start(args.toArray(String[]::new));
  }

  @AfterAll
  void stop() throws Exception {
    try (AutoCloseable database = this::closeDatabase) {
      if (service != null) {
        service.close();
      }
    }
  }

  @Test
  void anOutsiderWhoComputesTheOldProviderKeysChangesNothing() throws Exception {
    String key = "order-" + UUID.randomUUID();
    String account = "acct_squatted_" + run;
    Answer squatted = service.post("/provider/charges", null, key + ":charge:" + tag(PaymentPhases.OPERATION),
        "{\"account_id\":\"acct_outsider\",\"amount\":1,\"currency\":\"EUR\"}");
    assertThat(squatted.status()).as(squatted.toString()).isEqualTo(201);

    Answer paid = pay(key, account, 500);

    assertThat(paid.status()).as(paid.toString()).isEqualTo(201);
    assertThat(paid.json().path("status").asString()).isEqualTo("captured");
    assertThat(paid.json().path("provider_charge_id").asString()).isNotEqualTo(squatted.json().path("id").asString());
    Answer charges = service.get("/provider/charges?account_id=" + account, null);
    assertThat(charges.json().path("charges").size()).as(charges.toString()).isEqualTo(1);
    assertThat(charges.json().path("charges").get(0).path("amount").asLong()).isEqualTo(500);
  }

  @Test
  void aChargeTheProviderRefusesForGoodIsAKeptFailedPaymentTheCompleterLeavesAlone() throws Exception {
    String key = "order-" + UUID.randomUUID();
    Answer unavailable = failingProvider(() -> pay(key, "acct_refused_" + run, 500));
    assertThat(unavailable.status()).as(unavailable.toString()).isEqualTo(503);
    claimedBeforeNonces(PaymentPhases.OPERATION, key);
    Answer squatted = service.post("/provider/charges", null, key + ":charge:" + tag(PaymentPhases.OPERATION),
        "{\"account_id\":\"acct_outsider\",\"amount\":1,\"currency\":\"EUR\"}");
    assertThat(squatted.status()).as(squatted.toString()).isEqualTo(201);

    Answer refused = pay(key, "acct_refused_" + run, 500);
    Answer again = pay(key, "acct_refused_" + run, 500);

    assertKeptRefusal(refused);
    assertThat(refused.header("Idempotency-Status")).isEqualTo("stored");
    assertThat(again.status()).as(again.toString()).isEqualTo(422);
    assertThat(again.header("Idempotency-Status")).isEqualTo("replayed");
    assertThat(again.text()).isEqualTo(refused.text());
    String paymentId = refused.json().path("payment_id").asString();
    Answer payment = service.get("/payments/" + paymentId, alice.apiKey());
    assertThat(payment.json().path("status").asString()).as(payment.toString()).isEqualTo("failed");
    assertCompleterLeavesAlone(RecordKey.of(alice.tenant(), PaymentPhases.OPERATION, key));
  }

  @Test
  void aRefundTheProviderRefusesForGoodGivesItsReservedAmountBack() throws Exception {
    Answer paid = pay("pay-" + UUID.randomUUID(), "acct_refund_" + run, 1000);
    assertThat(paid.status()).as(paid.toString()).isEqualTo(201);
    String paymentId = paid.json().path("id").asString();
    Answer outsiderCharge = service.post("/provider/charges", null, "outsider-" + UUID.randomUUID(),
        "{\"account_id\":\"acct_outsider\",\"amount\":10,\"currency\":\"EUR\"}");
    String key = "refund-" + UUID.randomUUID();
    Answer unavailable = failingProvider(() -> refund(key, paymentId, 1000));
    assertThat(unavailable.status()).as(unavailable.toString()).isEqualTo(503);
    claimedBeforeNonces(RefundPhases.OPERATION, key);
    Answer squatted = service.post("/provider/refunds", null, key + ":refund:" + tag(RefundPhases.OPERATION),
        "{\"charge_id\":\"" + outsiderCharge.json().path("id").asString() + "\",\"amount\":1}");
    assertThat(squatted.status()).as(squatted.toString()).isEqualTo(201);

    Answer refused = refund(key, paymentId, 1000);
    Answer afterRefusal = service.get("/payments/" + paymentId, alice.apiKey());
    Answer legitimate = refund("refund-" + UUID.randomUUID(), paymentId, 1000);

    assertKeptRefusal(refused);
    Answer pending = service.get("/refunds/" + refused.json().path("refund_id").asString(), alice.apiKey());
    assertThat(pending.json().path("status").asString()).as(pending.toString()).isEqualTo("failed");
    assertThat(afterRefusal.json().path("refunded_amount").asLong()).as("the reservation was released").isZero();
    assertThat(legitimate.status()).as(legitimate.toString()).isEqualTo(201);
    assertThat(service.get("/payments/" + paymentId, alice.apiKey()).json().path("refunded_amount").asLong())
        .isEqualTo(1000);
    assertCompleterLeavesAlone(RecordKey.of(alice.tenant(), RefundPhases.OPERATION, key));
  }

  @Test
  void theRefusalFaultNeverRefusesAKeyTheProviderAppliedAlready() {
    String key = "order-" + UUID.randomUUID();
    String account = "acct_applied_" + run;
    // the provider charges, then its answer is lost: the payment stays pending, the client gets a retryable answer
    assertThat(service.put("/admin/faults", null, "{\"provider_timeout_after_commit_rate\":1}").status())
        .isEqualTo(200);
    Answer lost;
    try {
      lost = pay(key, account, 700);
    } finally {
      assertThat(service.put("/admin/faults", null, "{\"provider_timeout_after_commit_rate\":0,"
          + "\"provider_refusal_rate\":1}").status()).isEqualTo(200);
    }
    Answer resumed;
    try {
      assertThat(lost.status()).as(lost.toString()).isBetween(500, 599);
      // the retry calls the provider with the same key: a provider answers a key it applied with what it applied
      resumed = pay(key, account, 700);
    } finally {
      assertThat(service.put("/admin/faults", null, "{\"provider_refusal_rate\":0}").status()).isEqualTo(200);
    }

    assertThat(resumed.status()).as(resumed.toString()).isEqualTo(201);
    assertThat(resumed.json().path("status").asString()).isEqualTo("captured");
    Answer charges = service.get("/provider/charges?account_id=" + account, null);
    assertThat(charges.json().path("charges").size()).as(charges.toString()).isEqualTo(1);
  }

  /** What {@code call} answers while every provider call fails before applying anything (503, not kept). */
  private Answer failingProvider(Supplier<Answer> call) {
    assertThat(service.put("/admin/faults", null, FAULTS.formatted(1)).status()).isEqualTo(200);
    try {
      return call.get();
    } finally {
      assertThat(service.put("/admin/faults", null, FAULTS.formatted(0)).status()).isEqualTo(200);
    }
  }

  /**
   * Makes alice's record of {@code key} look as if it had been claimed before key nonces existed (an operation in
   * flight across the upgrade): it keeps the old derivation, which anyone can compute.
   */
  private void claimedBeforeNonces(String operation, String key) throws SQLException {
    try (Connection c = service.dataSource().getConnection(); PreparedStatement ps = c.prepareStatement(
        "UPDATE idem_record SET key_nonce = NULL WHERE scope = ? AND operation = ? AND idem_key = ?"
            + " AND state = 'in_progress'")) {
      ps.setString(1, alice.tenant());
      ps.setString(2, operation);
      ps.setString(3, key);
      assertThat(ps.executeUpdate()).as("the in-progress record of " + key).isEqualTo(1);
    }
  }

  private void assertKeptRefusal(Answer refused) {
    assertThat(refused.status()).as(refused.toString()).isEqualTo(422);
    assertThat(refused.contentType()).isEqualTo("application/problem+json");
    assertThat(refused.code()).isEqualTo("PROVIDER.idempotency_key_reused");
    assertThat(refused.json().path("retryable").asBoolean(true)).isFalse();
  }

  /** The record is final, and a completer round, run now, finds nothing to resume and leaves it as it is. */
  private void assertCompleterLeavesAlone(RecordKey key) {
    Idem idem = service.context().getBean(Idem.class);
    IdempotencyRecord ended = idem.store().find(key).orElseThrow();
    assertThat(ended.state()).isEqualTo(RecordState.FAILED);
    assertThat(ended.lockedUntil()).isNull();

    idem.completer().batchSize(10_000).build().runOnce();

    assertThat(idem.store().find(key)).contains(ended);
  }

  private Answer pay(String key, String account, long amount) {
    return service.post("/payments", alice.apiKey(), key,
        "{\"account_id\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\"}");
  }

  private Answer refund(String key, String paymentId, long amount) {
    return service.post("/refunds", alice.apiKey(), key,
        "{\"payment_id\":\"" + paymentId + "\",\"amount\":" + amount + "}");
  }

  /** What anyone can compute of the provider key for alice's operation: 12 hex of SHA-256(tenant NUL operation). */
  private String tag(String operation) throws Exception {
    byte[] digest = MessageDigest.getInstance("SHA-256")
        .digest((alice.tenant() + '\u0000' + operation).getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(digest).substring(0, 12);
  }
}
