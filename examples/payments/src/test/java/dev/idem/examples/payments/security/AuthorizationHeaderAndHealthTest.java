package dev.idem.examples.payments.security;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.examples.payments.Answer;
import dev.idem.examples.payments.Caller;
import dev.idem.examples.payments.ServiceOfItsOwn;
import java.io.ByteArrayInputStream;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

/**
 * Security, on the service's own container (Tomcat): a request with two {@code Authorization} headers is refused
 * with 400 {@code VALIDATION.request} before any work, whichever header holds a valid key, on tenant routes (an
 * idempotent {@code POST /payments}, reads), admin routes (even from loopback), the console's routes and the
 * actuator; and {@code /actuator/health} shows its details (database, disk) to the admin alone, the status to anyone
 * else. Runs on an H2 file database; {@link PostgresAuthorizationHeaderAndHealthTest} runs it on PostgreSQL.
 */
class AuthorizationHeaderAndHealthTest extends ServiceOfItsOwn {
  private static final String NO_FAULTS =
      "{\"provider_timeout_after_commit_rate\":0,\"provider_error_rate\":0,\"provider_latency_ms\":0}";

  private final String run = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
  final Caller alice = new Caller("sk_dup_alice_" + run, "alice");
  final Caller bob = new Caller("sk_dup_bob_" + run, "bob");
  final String adminKey = "sk_dup_admin_" + run;

  @Override
  protected List<String> arguments() {
    return List.of(alice.argument(), bob.argument(), "--payments.admin-key=" + adminKey,
        "--payments.outbox.enabled=false");
  }

  @AfterEach
  void healProvider() {
    assertThat(service.put("/admin/faults", adminKey, NO_FAULTS).status()).isEqualTo(200);
  }

  // ---------------------------------------------------------------- two Authorization headers

  @Test
  void twoAuthorizationHeadersOnAnIdempotentRouteAreRefusedBeforeAnyWork() {
    String account = "acct_dup_" + run;
    String key = UUID.randomUUID().toString();
    long charges = providerCharges();
    String body = "{\"account_id\":\"" + account + "\",\"amount\":100,\"currency\":\"EUR\"}";

    Map<String, Answer> answers = new LinkedHashMap<>();
    answers.put("valid key first", postTwice(alice.apiKey(), "sk_nobody", key, body));
    answers.put("valid key second", postTwice("sk_nobody", alice.apiKey(), key, body));
    answers.put("two tenants' keys", postTwice(alice.apiKey(), bob.apiKey(), key, body));
    answers.put("the same key twice", postTwice(alice.apiKey(), alice.apiKey(), key, body));
    answers.put("the admin key and a tenant's", postTwice(adminKey, alice.apiKey(), key, body));
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    String raw = service.raw("POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        + "Authorization: Bearer " + alice.apiKey() + "\r\nauthorization: Bearer " + alice.apiKey()
        + "\r\nContent-Type: application/json\r\nIdempotency-Key: " + key + "\r\nContent-Length: " + bytes.length
        + "\r\n\r\n", new ByteArrayInputStream(bytes));

    answers.forEach((what, a) -> assertRefused(what, a));
    assertThat(raw).as("header names differing in case are one field").startsWith("HTTP/1.1 400")
        .contains("application/problem+json").contains("VALIDATION.request");
    assertThat(service.count("SELECT COUNT(*) FROM idem_record WHERE idem_key = ?", key)).isZero();
    assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", account)).isZero();
    assertThat(providerCharges()).isEqualTo(charges);
    Answer single = service.post("/payments", alice.apiKey(), key, body);
    assertThat(single.status()).as("the refused key is still free: " + single).isEqualTo(201);
    assertThat(single.header("Idempotency-Status")).isEqualTo("stored");
  }

  @Test
  void twoAuthorizationHeadersAreRefusedOnEveryAuthenticatedRoute() {
    String[] paths = {"/ledger/summary", "/payments/pay_none", "/webhook-endpoints", "/admin/faults",
        "/admin/provider/stats", "/admin/idempotency-records", "/console/api/session", "/console/api/records",
        "/actuator/prometheus", "/actuator/idempotency", "/actuator/health"};
    String[][] pairs = {{alice.apiKey(), "sk_nobody"}, {"sk_nobody", alice.apiKey()}, {adminKey, alice.apiKey()},
        {alice.apiKey(), adminKey}, {adminKey, adminKey}};

    for (String path : paths) {
      for (String[] pair : pairs) {
        Answer a = service.send(service.request(path, pair[0]).header("Authorization", "Bearer " + pair[1])
            .GET().build());
        assertRefused("GET " + path + " with " + pair[0] + ", " + pair[1], a);
      }
    }
  }

  @Test
  void twoAuthorizationHeadersChangeNothingOnAnAdminRoute() {
    Answer put = service.send(service.request("/admin/faults", adminKey)
        .header("Authorization", "Bearer " + adminKey).header("Content-Type", "application/json")
        .PUT(HttpRequest.BodyPublishers.ofString("{\"provider_error_rate\":1}")).build());

    assertRefused("PUT /admin/faults", put);
    Answer faults = service.get("/admin/faults", adminKey);
    assertThat(faults.status()).isEqualTo(200);
    assertThat(faults.json().path("provider_error_rate").asDouble()).isZero();
  }

  private Answer postTwice(String first, String second, String key, String body) {
    return service.send(service.request("/payments", first).header("Authorization", "Bearer " + second)
        .header("Content-Type", "application/json").header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build());
  }

  private static void assertRefused(String what, Answer a) {
    assertThat(a.status()).as(what + ": " + a).isEqualTo(400);
    assertThat(a.header("Content-Type")).as(what).isEqualTo("application/problem+json");
    assertThat(a.code()).as(what).isEqualTo("VALIDATION.request");
    assertThat(a.json().path("detail").asString()).as(what).contains("more than one Authorization header");
    assertThat(a.header("WWW-Authenticate")).as(what).contains("error=\"invalid_request\"");
    assertThat(a.header("Idempotency-Status")).as(what).isNull();
  }

  private long providerCharges() {
    return service.get("/admin/provider/stats", adminKey).json().path("charges").asLong();
  }

  // ---------------------------------------------------------------- /actuator/health

  @Test
  void healthShowsItsDetailsToTheAdminOnly() {
    Answer adminFromAPage = service.send(service.request("/actuator/health", adminKey)
        .header("Origin", "http://page.example").GET().build());
    Answer loopbackTool = service.get("/actuator/health", null);
    Answer adminComponent = service.get("/actuator/health/db", adminKey);

    for (Answer a : List.of(adminFromAPage, loopbackTool)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(200);
      JsonNode health = a.json();
      assertThat(health.path("status").asString()).isEqualTo("UP");
      assertThat(health.path("components").path("db").path("details").path("database").asString()).isNotEmpty();
      assertThat(health.path("components").path("diskSpace").path("details").has("free")).isTrue();
    }
    assertThat(adminComponent.status()).as(adminComponent.toString()).isEqualTo(200);
    assertThat(adminComponent.json().path("details").path("database").asString()).isNotEmpty();
  }

  @Test
  void healthShowsOnlyTheStatusToEveryoneElse() {
    Answer browserPage = service.send(service.request("/actuator/health", null)
        .header("Origin", "http://page.example").GET().build());
    Answer crossSite = service.send(service.request("/actuator/health", null)
        .header("Sec-Fetch-Site", "cross-site").GET().build());
    Answer tenant = service.send(service.request("/actuator/health", alice.apiKey())
        .header("Origin", "http://page.example").GET().build());
    Answer wrongKey = service.send(service.request("/actuator/health", "sk_admin")
        .header("Origin", "http://page.example").GET().build());
    // a caller that names the service by a host name, as every caller from another machine does
    String remote = service.raw("GET /actuator/health HTTP/1.1\r\nHost: payments.example\r\nConnection: close\r\n\r\n",
        new ByteArrayInputStream(new byte[0]));
    Answer componentForAPage = service.send(service.request("/actuator/health/db", null)
        .header("Origin", "http://page.example").GET().build());

    for (Answer a : List.of(browserPage, crossSite, tenant, wrongKey)) {
      assertThat(a.status()).as(a.toString()).isEqualTo(200);
      JsonNode health = a.json();
      assertThat(health.path("status").asString()).isEqualTo("UP");
      assertThat(health.has("components")).as(a.toString()).isFalse();
      assertThat(a.text()).doesNotContain("database").doesNotContain("diskSpace").doesNotContain("free");
    }
    assertThat(remote).startsWith("HTTP/1.1 200").contains("\"status\":\"UP\"").doesNotContain("components")
        .doesNotContain("database").doesNotContain("free");
    assertThat(componentForAPage.status()).as("a component is an admin route").isEqualTo(401);
  }
}
