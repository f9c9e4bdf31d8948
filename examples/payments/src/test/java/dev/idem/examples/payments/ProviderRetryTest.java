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
 * The provider's outages are retried inside the service (retry {@code provider}) and counted in
 * {@code idem.retry.retries{cause=ProviderUnavailableException}}: with the fault randomness seeded, the first
 * attempt of the charge and the first attempt of the refund fail before the provider applies anything, and the
 * second attempts pass, so the client gets its 201s at once and the provider applies each call once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProviderRetryTest {
  /**
   * {@code new Random(4134)} draws 0.095, 0.551, 0.089, 0.929 first: below the error rate (an outage), above it,
   * below, above. Only the outage check draws (the timeout-after-commit rate is 0, and the retries' jitter has a
   * randomness of its own).
   */
  private static final String SEED = "4134";
  private static final String ERROR_RATE = "0.3";

  @TempDir
  static Path data;

  private RunningService service;

  @BeforeAll
  void start() {
    service = RunningService.start(
        "--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE",
        "--payments.provider.seed=" + SEED, "--payments.provider.error-rate=" + ERROR_RATE);
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  private double counter(String name, String... tags) {
    Counter c = service.context().getBean(MeterRegistry.class).find(name).tag("retry", ProviderClient.NAME)
        .tags(tags).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void anOutageOfTheProviderIsRetriedAndCountedByCause() {
    String account = "acct_retry_" + UUID.randomUUID().toString().substring(0, 8);

    Answer payment = service.post("/payments", "sk_test_alice", "pay-" + UUID.randomUUID(),
        "{\"account_id\":\"" + account + "\",\"amount\":1200,\"currency\":\"EUR\"}");
    String paymentId = payment.json().path("id").asString();
    Answer refund = service.post("/refunds", "sk_test_alice", "refund-" + UUID.randomUUID(),
        "{\"payment_id\":\"" + paymentId + "\",\"amount\":200}");
    Answer prometheus = service.get("/actuator/prometheus", null);

    assertThat(payment.status()).as(payment.toString()).isEqualTo(201);
    assertThat(refund.status()).as(refund.toString()).isEqualTo(201);
    assertThat(counter("idem.retry.retries", "cause", "ProviderUnavailableException")).isEqualTo(2);
    assertThat(counter("idem.retry.attempts")).isEqualTo(4);
    assertThat(counter("idem.retry.outcome", "outcome", "success", "reason", "retried")).isEqualTo(2);
    assertThat(counter("idem.retry.outcome", "outcome", "failure")).isZero();
    assertThat(service.get("/provider/charges?account_id=" + account, null).json().path("charges").size())
        .isEqualTo(1);
    assertThat(service.count("SELECT COUNT(*) FROM pay_provider_refund WHERE charge_id = ?",
        payment.json().path("provider_charge_id").asString())).isEqualTo(1);
    assertThat(prometheus.text()).containsPattern("idem_retry_retries_total\\{[^}]*"
        + "cause=\"ProviderUnavailableException\"[^}]*instance=\"payments\"[^}]*retry=\"provider\"[^}]*} 2.0");
  }
}
