package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.outbox.webhook.WebhookSecret;
import dev.idem.outbox.webhook.WebhookSigner;
import dev.idem.test.Eventually;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * {@code /actuator/prometheus} after a short workload on a fresh database: every meter of docs/OPERATIONS.md is there,
 * with the count the workload implies. Each step of the workload causes a known number of each outcome, so the
 * counts are exact, not "at least one".
 */
class PrometheusMetricsTest {
  private static final Duration DEADLINE = Duration.ofSeconds(60);
  private static final String SECRET = OutboxWebhooksContract.PROVIDER_SECRET;
  private static final Caller ALICE = new Caller("sk_test_alice", "alice");
  private static final String PAYMENTS = "POST /payments";

  @TempDir
  Path data;

  @Test
  void aShortWorkloadShowsEveryMeterWithTheExpectedCount() throws Exception {
    try (RunningService service = RunningService.start(
        "--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE",
        "--idem.completer.interval=200ms", "--idem.default-lease=10s",
        "--idem.metrics.in-progress-refresh=100ms", "--idem.outbox.metrics.stats-refresh=100ms",
        "--idem.server.retry-budget.enabled=true",
        "--payments.outbox.poll-interval=50ms", "--payments.outbox.max-attempts=2",
        "--payments.outbox.backoff-initial=100ms", "--payments.outbox.backoff-max=100ms",
        "--payments.provider.webhook-resend-ratio=1.0", "--payments.provider.webhook-secret=" + SECRET,
        "--payments.provider.circuit-breaker.enabled=true");
        WebhookSink accepting = WebhookSink.start(); WebhookSink refusing = WebhookSink.start()) {
      refusing.answer(500);
      subscribe(service, accepting, "payment.succeeded");
      subscribe(service, refusing, "payment.declined");
      String account = "acct_prom_" + UUID.randomUUID().toString().substring(0, 8);
      String first = key();

      // 3 created
      assertThat(pay(service, first, account, 100).status()).isEqualTo(201);
      assertThat(pay(service, key(), account, 200).status()).isEqualTo(201);
      assertThat(pay(service, key(), account, 300).status()).isEqualTo(201);
      // 2 replayed, the second one announced as a retry (the server retry budget admits it)
      assertThat(pay(service, first, account, 100).header("Idempotency-Status")).isEqualTo("replayed");
      Answer retried = service.send(service.request("/payments", ALICE.apiKey())
          .header("Content-Type", "application/json").header("Idempotency-Key", first)
          .header("Idempotency-Attempt", "2")
          .POST(HttpRequest.BodyPublishers.ofString(PaymentsServiceContract.body(account, 100))).build());
      assertThat(retried.header("Idempotency-Status")).isEqualTo("replayed");
      // 1 mismatch
      assertThat(pay(service, first, account, 999).code()).isEqualTo("CONFLICT.idempotency.payload_mismatch");
      // 1 in-progress conflict, then the held request is created (4 created)
      // (the provider's 3 s latency keeps the first request in progress well within its 10 s lease, so the duplicate,
      // sent once the record is seen in progress, meets it there even on a slow machine)
      service.put("/admin/faults", null, "{\"provider_latency_ms\":3000}");
      String held = key();
      CompletableFuture<Answer> holder = CompletableFuture.supplyAsync(() -> pay(service, held, account, 400));
      Eventually.await("the record of " + held + " in progress", DEADLINE,
          () -> service.get("/admin/idempotency-records?state=in_progress", null).text(), b -> b.contains(held));
      Answer conflict = pay(service, held, account, 400);
      assertThat(conflict.status()).as(conflict.toString()).isEqualTo(409);
      assertThat(holder.get().status()).isEqualTo(201);
      service.put("/admin/faults", null, "{\"provider_latency_ms\":0}");
      // a declined payment (5 created): its event goes to the refusing sink and dies after 2 attempts
      Answer declined = pay(service, key(), "acct_declined_" + UUID.randomUUID().toString().substring(0, 8), 50);
      assertThat(declined.status()).isEqualTo(402);
      // an outage: 3 attempts (2 retries), answered 503; the completer takes over its released lease at once and
      // captures it (a recovery, not an execution: still 5 created)
      service.put("/admin/faults", null, "{\"provider_error_rate\":1}");
      Answer outage = pay(service, key(), account, 600);
      assertThat(outage.status()).as(outage.toString()).isEqualTo(503);
      service.put("/admin/faults", null, "{\"provider_error_rate\":0}");
      String outagePayment = outage.json().path("payment_id").asString();
      Eventually.await("the completer captures " + outagePayment, DEADLINE,
          () -> service.get("/payments/" + outagePayment, ALICE.apiKey()).json(),
          p -> p.path("status").asString().equals("captured"));
      // a provider webhook whose id comes again with another body: 1 inbox payload mismatch
      assertThat(providerWebhook(service, "{\"amount\":1}").status()).isEqualTo(200);

      JsonNode hooks = Eventually.await("every event delivered or dead", DEADLINE,
          () -> service.get("/admin/outbox/stats", null).json(),
          s -> s.path("counts").path("pending").asLong() == 0 && s.path("counts").path("dead").asLong() == 1);
      JsonNode provider = service.get("/admin/provider/webhooks", null).json();
      // every gauge of one scrape: the first read of the statistics runs in the background, and a scrape that
      // overlaps it shows it in the gauges read after it and NaN in those read before
      Map<String, Double> metrics = Eventually.await("the gauges caught up", DEADLINE,
          () -> scrape(service), m -> sum(m, "idem_outbox_dead", Map.of()) == 1
              && sum(m, "idem_outbox_backlog", Map.of()) == 0
              && sum(m, "idem_outbox_oldest_pending_age_seconds", Map.of()) == 0
              && sum(m, "idem_records_in_progress", Map.of()) == 0
              && sum(m, "idem_records_in_progress_lease_expired", Map.of()) == 0
              && sum(m, "idem_records_in_progress_oldest_age_seconds", Map.of()) == 0);
      // the completer may take the outage's payment over before the faults are lifted: each such try is a failed
      // recovery that made its own 3 provider attempts, so the counts below are exact given that number
      double failedRecoveries = sum(metrics, "idem_completer_recoveries_total", labels("result", "failed"));

      assertThat(sum(metrics, "idem_requests_total",
          labels("instance", "payments", "operation", PAYMENTS, "outcome", "created"))).isEqualTo(5);
      assertThat(sum(metrics, "idem_requests_total", labels("outcome", "replayed"))).isEqualTo(2);
      assertThat(sum(metrics, "idem_requests_total", labels("outcome", "mismatch"))).isEqualTo(1);
      assertThat(sum(metrics, "idem_requests_total", labels("outcome", "in_progress"))).isEqualTo(1);
      assertThat(sum(metrics, "idem_requests_total", labels("outcome", "released"))).isEqualTo(1);
      assertThat(sum(metrics, "idem_replay_key_age_seconds_count",
          labels("instance", "payments", "operation", PAYMENTS))).isEqualTo(2);
      assertThat(count(metrics, "idem_replay_key_age_seconds_bucket")).isPositive();
      assertThat(sum(metrics, "idem_request_duration_seconds_count", labels("outcome", "created"))).isEqualTo(5);
      assertThat(sum(metrics, "idem_lease_expired_total", labels("instance", "payments")))
          .isEqualTo(1 + failedRecoveries);
      assertThat(sum(metrics, "idem_completer_recoveries_total", labels("result", "recovered"))).isEqualTo(1);
      assertThat(sum(metrics, "idem_store_latency_seconds_count", labels("instance", "payments"))).isPositive();
      assertThat(sum(metrics, "idem_records_in_progress_oldest_age_seconds", Map.of())).isZero();
      assertThat(sum(metrics, "idem_records_in_progress_lease_expired", Map.of())).isZero();
      // retries: the outage's 2 retries of the provider call (and 2 per failed recovery); its breaker stayed closed
      assertThat(sum(metrics, "idem_retry_retries_total",
          labels("retry", "provider", "cause", "ProviderUnavailableException"))).isEqualTo(2 * (1 + failedRecoveries));
      assertThat(sum(metrics, "idem_retry_outcome_total", labels("retry", "provider", "outcome", "failure")))
          .isEqualTo(1 + failedRecoveries);
      assertThat(sum(metrics, "idem_retry_attempts_total", labels("retry", "provider"))).isEqualTo(
          sum(metrics, "idem_retry_outcome_total", labels("retry", "provider")) + 2 * (1 + failedRecoveries));
      assertThat(sum(metrics, "idem_retry_budget_refused_total", Map.of())).isZero();
      assertThat(sum(metrics, "idem_retry_circuit_refused_total", Map.of())).isZero();
      assertThat(sum(metrics, "idem_circuit_state", labels("circuit", "provider"))).isZero();
      assertThat(sum(metrics, "idem_server_retries_admitted_total", Map.of())).isEqualTo(1);
      assertThat(sum(metrics, "idem_server_retries_shed_total", Map.of())).isZero();
      assertThat(count(metrics, "idem_server_retry_share")).isEqualTo(1);
      // outbox: 5 payment.succeeded events delivered to the accepting sink; the declined one dead after 2 attempts
      assertThat(accepting.deliveries()).hasSize(5);
      assertThat(sum(metrics, "idem_outbox_delivered_total", labels("route", "webhook"))).isEqualTo(5);
      assertThat(sum(metrics, "idem_outbox_failed_total", labels("route", "webhook", "dead", "true"))).isEqualTo(1);
      assertThat(sum(metrics, "idem_outbox_failed_total", labels("route", "webhook", "dead", "false"))).isEqualTo(1);
      assertThat(sum(metrics, "idem_outbox_dead", Map.of())).isEqualTo(hooks.path("counts").path("dead").asLong());
      assertThat(sum(metrics, "idem_outbox_oldest_pending_age_seconds", Map.of())).isZero();
      assertThat(sum(metrics, "idem_outbox_delivery_latency_seconds_count", labels("route", "webhook")))
          .isEqualTo(5);
      // inbox: every provider webhook sent twice, so as many duplicates as processed events, and the forged reuse
      double processed = sum(metrics, "idem_inbox_processed_total", Map.of());
      assertThat(processed).isEqualTo(provider.path("inbox_processed").asLong()).isPositive();
      assertThat(sum(metrics, "idem_inbox_duplicates_total", Map.of()))
          .isEqualTo(provider.path("inbox_duplicates").asLong()).isPositive();
      assertThat(sum(metrics, "idem_inbox_payload_mismatch_total", Map.of())).isEqualTo(1);
      assertThat(metrics.keySet()).as("no meter is tagged with a key")
          .noneMatch(series -> series.contains(first) || series.contains(held));
    }
  }

  // ---------------------------------------------------------------- workload

  private static String key() {
    return "prom-" + UUID.randomUUID();
  }

  private static Answer pay(RunningService service, String key, String account, long amount) {
    return service.post("/payments", ALICE.apiKey(), key, PaymentsServiceContract.body(account, amount));
  }

  private static void subscribe(RunningService service, WebhookSink sink, String type) {
    Answer created = service.post("/webhook-endpoints", ALICE.apiKey(), null,
        "{\"url\":\"" + sink.url() + "\",\"events\":[\"" + type + "\"]}");
    assertThat(created.status()).as(created.toString()).isEqualTo(201);
    sink.secret(created.json().path("secret").asString());
  }

  /** Sends one signed provider webhook, then the same id with another body (answered 409); returns the first. */
  private static Answer providerWebhook(RunningService service, String data) {
    String id = UUID.randomUUID().toString();
    String body = "{\"id\":\"" + id + "\",\"type\":\"charge.succeeded\",\"created\":\"2026-01-01T00:00:00Z\","
        + "\"data\":{\"id\":\"ch_prom_" + id.substring(0, 8) + "\"," + data.substring(1) + "}";
    Answer first = signed(service, id, body);
    Answer reused = signed(service, id, body.replace("\"amount\":1", "\"amount\":2"));
    assertThat(reused.code()).isEqualTo("CONFLICT.webhook.payload_mismatch");
    return first;
  }

  private static Answer signed(RunningService service, String id, String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    long now = System.currentTimeMillis() / 1000;
    String signature = WebhookSigner.of(WebhookSecret.parse(SECRET)).sign(id, now, bytes);
    return service.send(service.request("/webhooks/provider", null).header("Content-Type", "application/json")
        .header("webhook-id", id).header("webhook-timestamp", Long.toString(now))
        .header("webhook-signature", signature).POST(HttpRequest.BodyPublishers.ofByteArray(bytes)).build());
  }

  // ---------------------------------------------------------------- the Prometheus text format

  private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})? (\\S+)$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

  /** Every sample of the scrape: "name{labels}" to its value. */
  private static Map<String, Double> scrape(RunningService service) {
    Answer answer = service.get("/actuator/prometheus", null);
    assertThat(answer.status()).as(answer.toString()).isEqualTo(200);
    Map<String, Double> samples = new LinkedHashMap<>();
    for (String line : answer.text().split("\n")) {
      Matcher m = SAMPLE.matcher(line);
      if (!line.startsWith("#") && m.matches()) {
        samples.put(m.group(1) + "{" + (m.group(3) == null ? "" : m.group(3)) + "}", Double.parseDouble(m.group(4)));
      }
    }
    return samples;
  }

  private static Map<String, String> labels(String... pairs) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      labels.put(pairs[i], pairs[i + 1]);
    }
    return labels;
  }


  /** The sum of the samples of {@code name} that carry every label of {@code wanted}. */
  private static double sum(Map<String, Double> samples, String name, Map<String, String> wanted) {
    return matching(samples, name, wanted).stream().mapToDouble(samples::get).sum();
  }

  private static long count(Map<String, Double> samples, String name) {
    return matching(samples, name, Map.of()).size();
  }

  private static List<String> matching(Map<String, Double> samples, String name, Map<String, String> wanted) {
    List<String> found = new ArrayList<>();
    for (String series : samples.keySet()) {
      if (!series.startsWith(name + "{")) {
        continue;
      }
      Map<String, String> labels = new LinkedHashMap<>();
      Matcher m = LABEL.matcher(series.substring(name.length()));
      while (m.find()) {
        labels.put(m.group(1), m.group(2));
      }
      if (labels.entrySet().containsAll(wanted.entrySet())) {
        found.add(series);
      }
    }
    return found;
  }
}
