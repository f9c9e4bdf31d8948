package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Access with configured keys: the admin routes closed to loopback callers, so only the admin key opens them, and
 * API keys from configuration replacing the built-in test keys.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConfiguredAccessTest {
  private RunningService service;

  @BeforeAll
  void start() {
    service = RunningService.start(
        "--spring.datasource.url=jdbc:h2:mem:access-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
        "--payments.admin-allow-loopback=false",
        "--payments.admin-key=sk_admin_Secret_1",
        "--payments.api-keys.sk_live_Carol_1=carol");
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  @Test
  void adminRoutesNeedTheAdminKeyWhenLoopbackIsNotTrusted() {
    Answer none = service.get("/admin/faults", null);
    Answer wrong = service.get("/admin/provider/stats", "sk_admin");
    Answer tenantKey = service.get("/admin/idempotency-records", "sk_live_Carol_1");
    Answer admin = service.get("/admin/faults", "sk_admin_Secret_1");

    for (Answer a : new Answer[] {none, wrong, tenantKey}) {
      assertThat(a.status()).as(a.toString()).isEqualTo(401);
      assertThat(a.code()).isEqualTo("AUTH.unauthenticated");
      assertThat(a.header("WWW-Authenticate")).startsWith("Bearer");
    }
    assertThat(admin.status()).isEqualTo(200);
  }

  @Test
  void configuredApiKeysReplaceTheTestKeys() {
    Answer carol = service.post("/payments", "sk_live_Carol_1", UUID.randomUUID().toString(),
        "{\"account_id\":\"acct_c\",\"amount\":10,\"currency\":\"EUR\"}");
    Answer alice = service.get("/ledger/summary", "sk_test_alice");

    assertThat(carol.status()).as(carol.toString()).isEqualTo(201);
    assertThat(service.get("/ledger/summary", "sk_live_Carol_1").json().path("payments").asLong()).isEqualTo(1);
    assertThat(alice.status()).isEqualTo(401);
  }

  @Test
  void healthIsOpenAndTheRestOfTheActuatorIsAnAdminRoute() {
    Answer health = service.get("/actuator/health", null);
    Answer prometheus = service.get("/actuator/prometheus", null);
    Answer records = service.get("/actuator/idempotency", "sk_test_alice");
    Answer adminPrometheus = service.get("/actuator/prometheus", "sk_admin_Secret_1");

    assertThat(health.status()).isEqualTo(200);
    assertThat(health.json().path("status").asString()).isEqualTo("UP");
    assertThat(prometheus.status()).as("the actuator lists every tenant's records").isEqualTo(401);
    assertThat(records.status()).as("a tenant key is no admin key").isEqualTo(401);
    assertThat(adminPrometheus.status()).isEqualTo(200);
    assertThat(adminPrometheus.text()).contains("hikaricp_connections");
  }
}
