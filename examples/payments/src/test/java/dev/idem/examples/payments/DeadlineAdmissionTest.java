package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The client's deadline ({@code Request-Timeout}) counts from the request's arrival, on the service's own container:
 * the deadline filter runs before the body guard and the bound on requests in flight, and a request waiting for a
 * slot waits no longer than its deadline. With the bound at 1, held by a payment the provider takes 8 s over, and
 * {@code payments.admission.max-wait} at 30 s, a payment sent with {@code Request-Timeout: 1500} is refused with 503
 * {@code TRANSIENT.overloaded} while the held payment still waits on the provider, and charges nothing. Waits on the
 * payments' state in the database, never on time.
 */
class DeadlineAdmissionTest extends ServiceOfItsOwn {
  static final Duration DEADLINE = Duration.ofSeconds(60);
  static final int PROVIDER_LATENCY_MS = 8_000;

  final Caller alice = new Caller("sk_deadline_alice_" + UUID.randomUUID().toString().substring(0, 8), "alice");

  @Override
  protected List<String> arguments() {
    return List.of(alice.argument(), "--payments.admission.max-in-flight=1", "--payments.admission.max-wait=30s",
        "--payments.outbox.enabled=false");
  }

  @Test
  void aRequestWaitingForASlotWaitsNoLongerThanItsDeadline() throws Exception {
    String held = "acct_deadline_held_" + UUID.randomUUID().toString().substring(0, 8);
    String late = "acct_deadline_late_" + UUID.randomUUID().toString().substring(0, 8);
    ExecutorService clients = Executors.newFixedThreadPool(2);
    try {
      assertThat(service.put("/admin/faults", null, "{\"provider_latency_ms\":" + PROVIDER_LATENCY_MS + "}").status())
          .isEqualTo(200);
      CompletableFuture<Answer> admitted = CompletableFuture.supplyAsync(() -> pay(held, null), clients);
      Eventually.await("the held payment waiting on the provider", DEADLINE,
          () -> service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ? AND status = 'pending'", held),
          n -> n == 1);

      Answer refused = CompletableFuture.supplyAsync(() -> pay(late, "1500"), clients)
          .get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
      boolean heldStillWaiting = !admitted.isDone();

      assertThat(refused.status()).as(refused.toString()).isEqualTo(503);
      assertThat(refused.code()).isEqualTo("TRANSIENT.overloaded");
      assertThat(heldStillWaiting).as("refused within its 1.5 s, not after max-wait or the held payment").isTrue();
      assertThat(admitted.get(DEADLINE.toSeconds(), TimeUnit.SECONDS).status()).isEqualTo(201);
      assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", late)).isZero();
    } finally {
      service.put("/admin/faults", null, "{\"provider_latency_ms\":0}");
      clients.shutdownNow();
    }
  }

  private Answer pay(String account, String requestTimeout) {
    HttpRequest.Builder b = service.request("/payments", alice.apiKey()).header("Content-Type", "application/json")
        .header("Idempotency-Key", UUID.randomUUID().toString())
        .POST(HttpRequest.BodyPublishers.ofString(
            "{\"account_id\":\"" + account + "\",\"amount\":700,\"currency\":\"EUR\"}", StandardCharsets.UTF_8));
    if (requestTimeout != null) {
      b.header("Request-Timeout", requestTimeout);
    }
    return service.send(b.build());
  }
}
