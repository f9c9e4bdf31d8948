package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A provider call that outlasts the lease (docs/http.md, "Things to know"), through the real filter, executor and
 * store of the service on its own container: {@code POST /payments} with a 1 s lease and a provider that takes 5 s.
 * The completer takes the record over while the client's worker waits on the provider; when that worker comes back,
 * its commit is fenced out and its client is answered 409 {@code CONFLICT.idempotency.in_progress} (retryable), and
 * a retry with the same key gets the payment the new owner finished. The provider charged once, the ledger booked
 * one pair. Runs on an H2 file database; {@link PostgresLeaseShorterThanProviderCallTest} runs it on PostgreSQL.
 */
class LeaseShorterThanProviderCallTest extends ServiceOfItsOwn {
  static final Duration DEADLINE = Duration.ofSeconds(60);
  /** The provider's latency: five leases, so the completer has long taken the record over when the call returns. */
  static final int PROVIDER_LATENCY_MS = 5_000;

  final Caller alice = new Caller("sk_lease_alice_" + UUID.randomUUID().toString().substring(0, 8), "alice");

  @Override
  protected List<String> arguments() {
    return List.of(alice.argument(), "--idem.default-lease=1s", "--idem.completer.interval=200ms",
        "--payments.outbox.enabled=false");
  }

  @Test
  void theLateWorkersClientGets409InProgressAndItsRetryThePayment() {
    String account = "acct_lease_" + UUID.randomUUID().toString().substring(0, 8);
    String key = UUID.randomUUID().toString();
    String body = "{\"account_id\":\"" + account + "\",\"amount\":900,\"currency\":\"EUR\"}";
    assertThat(service.put("/admin/faults", null, "{\"provider_latency_ms\":" + PROVIDER_LATENCY_MS + "}").status())
        .isEqualTo(200);

    Answer late;
    try {
      late = service.post("/payments", alice.apiKey(), key, body);
    } finally {
      assertThat(service.put("/admin/faults", null, "{\"provider_latency_ms\":0}").status()).isEqualTo(200);
    }
    Answer retried = Eventually.await("a final answer for key " + key, DEADLINE,
        () -> service.post("/payments", alice.apiKey(), key, body), a -> a.status() != 409);

    assertThat(late.status()).as(late.toString()).isEqualTo(409);
    assertThat(late.header("Content-Type")).isEqualTo("application/problem+json");
    assertThat(late.code()).isEqualTo("CONFLICT.idempotency.in_progress");
    assertThat(late.json().path("retryable").asBoolean()).isTrue();
    assertThat(retried.status()).as(retried.toString()).isEqualTo(201);
    assertThat(retried.json().path("status").asString()).isEqualTo("captured");
    String paymentId = retried.json().path("id").asString();
    assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", account)).isEqualTo(1);
    assertThat(service.count("SELECT COUNT(*) FROM pay_provider_charge WHERE account_id = ?", account))
        .as("the provider charged once").isEqualTo(1);
    assertThat(service.count("SELECT COUNT(*) FROM pay_ledger_entry WHERE reference_id = ?", paymentId))
        .as("one ledger pair").isEqualTo(2);
    Answer replay = service.post("/payments", alice.apiKey(), key, body);
    assertThat(replay.header("Idempotency-Status")).isEqualTo("replayed");
    assertThat(replay.body()).isEqualTo(retried.body());
  }
}
