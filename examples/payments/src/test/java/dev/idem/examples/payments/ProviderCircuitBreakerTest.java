package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.provider.ProviderClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The provider's circuit breaker, when turned on ({@code payments.provider.circuit-breaker.enabled=true}): once the
 * provider's failures open it, a payment is answered like an outage (503 {@code DEPENDENCY.unavailable}, retryable,
 * {@code Retry-After}) without calling the provider, even after the provider has recovered, until the open duration
 * (an hour here) has passed. The state shows in {@code idem.circuit.state}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProviderCircuitBreakerTest {
  @TempDir
  static Path data;

  private RunningService service;

  @BeforeAll
  void start() {
    service = RunningService.start(
        "--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE",
        "--payments.provider.circuit-breaker.enabled=true", "--payments.provider.circuit-breaker.window-size=4",
        "--payments.provider.circuit-breaker.minimum-calls=2",
        "--payments.provider.circuit-breaker.open-duration=1h");
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  private Answer pay(String account) {
    return service.post("/payments", "sk_test_alice", "pay-" + UUID.randomUUID(),
        "{\"account_id\":\"" + account + "\",\"amount\":700,\"currency\":\"EUR\"}");
  }

  private double circuitState() {
    return service.context().getBean(MeterRegistry.class).get("idem.circuit.state")
        .tag("circuit", ProviderClient.NAME).gauge().value();
  }

  @Test
  void anOpenBreakerAnswersLikeAnOutageWithoutCallingTheProvider() {
    String before = "acct_cb_ok_" + UUID.randomUUID().toString().substring(0, 8);
    String during = "acct_cb_down_" + UUID.randomUUID().toString().substring(0, 8);
    String after = "acct_cb_after_" + UUID.randomUUID().toString().substring(0, 8);

    Answer healthy = pay(before);
    double closed = circuitState();
    service.put("/admin/faults", null, "{\"provider_error_rate\":1}");
    Answer outage = pay(during);
    service.put("/admin/faults", null, "{\"provider_error_rate\":0}");
    Answer refused = pay(after);
    Counter refusedAttempts = service.context().getBean(MeterRegistry.class).find("idem.retry.circuit.refused")
        .tag("retry", ProviderClient.NAME).counter();

    assertThat(healthy.status()).as(healthy.toString()).isEqualTo(201);
    assertThat(closed).isZero();
    assertThat(outage.status()).as(outage.toString()).isEqualTo(503);
    assertThat(refused.status()).as("the provider is back, but the breaker is open: " + refused).isEqualTo(503);
    assertThat(refused.code()).isEqualTo("DEPENDENCY.unavailable");
    assertThat(refused.json().path("retryable").asBoolean()).isTrue();
    assertThat(refused.header("Retry-After")).isNotNull();
    assertThat(refused.header("Idempotency-Status")).as("not kept").isNull();
    assertThat(circuitState()).isEqualTo(2);
    assertThat(refusedAttempts.count()).isGreaterThanOrEqualTo(2);
    assertThat(service.get("/provider/charges?account_id=" + after, null).json().path("charges").size())
        .as("the provider was not called").isZero();
  }
}
