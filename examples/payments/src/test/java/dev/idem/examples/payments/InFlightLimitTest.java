package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.test.Eventually;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The bound on requests in flight ({@code payments.admission.max-in-flight}), on the service's own container: with
 * the bound at 2 and two payments held by the provider's latency, further payments are refused, once they waited
 * {@code payments.admission.max-wait} (1 s) for a slot, with 503 {@code TRANSIENT.overloaded} (retryable,
 * {@code Retry-After}) long before the admitted ones end, and charge nothing, while the health probe, the
 * metrics and the console's page are still served; the two admitted payments succeed, and the refused ones succeed
 * when retried with the same keys. Waits on the payments' state in the database, never on time.
 */
class InFlightLimitTest extends ServiceOfItsOwn {
  static final Duration DEADLINE = Duration.ofSeconds(30);
  /** Long enough that the refused requests are answered while the admitted ones still wait on the provider. */
  static final int PROVIDER_LATENCY_MS = 5_000;
  static final int BOUND = 2;
  static final int REFUSED = 4;

  final Caller alice = new Caller("sk_bound_alice_" + UUID.randomUUID().toString().substring(0, 8), "alice");

  @Override
  protected List<String> arguments() {
    return List.of(alice.argument(), "--payments.admission.max-in-flight=" + BOUND,
        "--payments.outbox.enabled=false");
  }

  @Test
  void requestsBeyondTheBoundAre503AndChargeNothing() throws Exception {
    String held = "acct_bound_held_" + UUID.randomUUID().toString().substring(0, 8);
    String extra = "acct_bound_extra_" + UUID.randomUUID().toString().substring(0, 8);
    ExecutorService clients = Executors.newFixedThreadPool(BOUND + REFUSED);
    try {
      assertThat(service.put("/admin/faults", null, "{\"provider_latency_ms\":" + PROVIDER_LATENCY_MS + "}").status())
          .isEqualTo(200);
      List<CompletableFuture<Answer>> admitted = new ArrayList<>();
      for (int i = 0; i < BOUND; i++) {
        String key = UUID.randomUUID().toString();
        admitted.add(CompletableFuture.supplyAsync(() -> pay(key, held), clients));
      }
      // both admitted payments are created and wait on the provider: the bound is full
      Eventually.await("two payments waiting on the provider", DEADLINE,
          () -> service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ? AND status = 'pending'", held),
          n -> n == BOUND);

      List<String> keys = new ArrayList<>();
      List<CompletableFuture<Answer>> refused = new ArrayList<>();
      for (int i = 0; i < REFUSED; i++) {
        String key = UUID.randomUUID().toString();
        keys.add(key);
        refused.add(CompletableFuture.supplyAsync(() -> pay(key, extra), clients));
      }
      for (CompletableFuture<Answer> f : refused) {
        Answer a = f.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        assertThat(a.status()).as(a.toString()).isEqualTo(503);
        assertThat(a.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat(a.code()).isEqualTo("TRANSIENT.overloaded");
        assertThat(a.json().path("retryable").asBoolean()).isTrue();
        assertThat(a.header("Retry-After")).isEqualTo("1");
      }
      assertThat(admitted).as("the refusals came while the admitted payments still waited on the provider")
          .noneMatch(CompletableFuture::isDone);
      Answer gauge = service.get("/actuator/metrics/payments.requests.in_flight", null);
      assertThat(gauge.status()).as("probes pass the bound: " + gauge).isEqualTo(200);
      assertThat(gauge.json().path("measurements").get(0).path("value").asDouble()).isEqualTo(BOUND);
      assertThat(service.get("/actuator/health", null).status()).isEqualTo(200);
      assertThat(service.get("/console/", null).status()).isEqualTo(200);
      assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", extra)).isZero();
      assertThat(service.count("SELECT COUNT(*) FROM pay_provider_charge WHERE account_id = ?", extra))
          .as("nothing charged for a refused request").isZero();

      for (CompletableFuture<Answer> f : admitted) {
        Answer a = f.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
        assertThat(a.status()).as(a.toString()).isEqualTo(201);
      }
      // the admin routes are bounded too: the faults change once the bound has room again
      assertThat(service.put("/admin/faults", null, "{\"provider_latency_ms\":0}").status()).isEqualTo(200);
      for (String key : keys) {
        Answer a = pay(key, extra);
        assertThat(a.status()).as("a refused key is free for its retry: " + a).isEqualTo(201);
      }
      assertThat(service.count("SELECT COUNT(*) FROM pay_provider_charge WHERE account_id = ?", held)).isEqualTo(2);
      assertThat(service.count("SELECT COUNT(*) FROM pay_provider_charge WHERE account_id = ?", extra))
          .isEqualTo(REFUSED);
      Answer after = service.get("/actuator/metrics/payments.requests.refused", null);
      assertThat(after.json().path("measurements").get(0).path("value").asDouble()).isEqualTo(REFUSED);
    } finally {
      service.put("/admin/faults", null, "{\"provider_latency_ms\":0}");
      clients.shutdownNow();
    }
  }

  private Answer pay(String key, String account) {
    return service.post("/payments", alice.apiKey(), key,
        "{\"account_id\":\"" + account + "\",\"amount\":700,\"currency\":\"EUR\"}");
  }
}
