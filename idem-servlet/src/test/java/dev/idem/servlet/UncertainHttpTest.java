package dev.idem.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.core.IdempotencyKey;
import dev.idem.core.Operation;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.core.Resolution;
import dev.idem.core.Scope;
import dev.idem.core.StoredResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An uncertain record over real HTTP (embedded Jetty, H2): a payment whose charge keeps failing past its resume cap
 * is answered 409 {@code CONFLICT.idempotency.outcome_uncertain}, not retryable, with a link to the record, and
 * nothing runs; once an operator decides it, the same request replays the decision.
 */
class UncertainHttpTest {
  private final HttpClient http = HttpClient.newHttpClient();
  private TestService service;

  @BeforeEach
  void start() throws Exception {
    service = new TestService(TestService.DB_H2, TestService.JETTY,
        b -> b.recordLink(key -> "/admin/records/" + key.scope() + "/" + key.key()));
  }

  @AfterEach
  void stop() throws Exception {
    service.close();
  }

  private HttpResponse<String> pay(String key) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(service.url("/payments"))).timeout(Duration.ofSeconds(30))
        .header("Authorization", "Bearer alice").header("Content-Type", "application/json")
        .header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":100}", StandardCharsets.UTF_8))
        .build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aPaymentPastItsResumeCapIsA409UncertainProblemWithALinkAndNothingRunsUntilAnOperatorDecides()
      throws Exception {
    String key = "k-" + UUID.randomUUID();
    RecordKey recordKey = new RecordKey(Scope.of("alice"), Operation.of("POST /payments"), IdempotencyKey.of(key));
    service.chargeFails = true;
    for (int attempt = 1; attempt <= TestService.RESUME_CAP; attempt++) {
      assertThat(pay(key).statusCode()).as("attempt %d", attempt).isGreaterThanOrEqualTo(500);
    }
    service.chargeFails = false;

    HttpResponse<String> uncertain = pay(key);
    RecordState stateThen = service.store.find(recordKey).orElseThrow().state();
    service.idem.resolve(recordKey, Resolution.complete(StoredResponse.json(201, "{\"status\":\"captured\"}"),
        "ops@example", "the provider shows the charge", Instant.now()));
    HttpResponse<String> decided = pay(key);

    assertThat(stateThen).isEqualTo(RecordState.UNCERTAIN);
    assertThat(uncertain.statusCode()).isEqualTo(409);
    assertThat(uncertain.headers().firstValue("Content-Type")).hasValue("application/problem+json");
    assertThat(uncertain.headers().firstValue("Idempotency-Key")).hasValue(key);
    assertThat(uncertain.headers().firstValue("Link"))
        .hasValue("</admin/records/alice/" + key + ">; rel=\"related\"");
    assertThat(uncertain.body()).contains("\"code\":\"CONFLICT.idempotency.outcome_uncertain\"", "\"status\":409",
        "\"retryable\":false", "\"record\":\"/admin/records/alice/" + key + "\"", "\"uncertain_since\":\"");
    assertThat(service.charges).as("the charge never went through").isEmpty();
    assertThat(decided.statusCode()).isEqualTo(201);
    assertThat(decided.headers().firstValue("Idempotency-Status")).hasValue("replayed");
    assertThat(decided.body()).isEqualTo("{\"status\":\"captured\"}");
  }
}
