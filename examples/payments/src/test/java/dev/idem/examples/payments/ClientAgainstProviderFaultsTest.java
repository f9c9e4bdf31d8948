package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.client.IdempotentHttpClient;
import dev.idem.client.Intent;
import dev.idem.client.IntentPendingException;
import dev.idem.client.Response;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Idem's client against the reference service with the provider failing: timeouts after its commit and outages.
 * Every payment intent ends in exactly one payment, one provider charge and one ledger pair.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientAgainstProviderFaultsTest {
  private static final int INTENTS = 40;

  @TempDir
  static Path data;

  private RunningService service;

  @BeforeAll
  void start() {
    service = RunningService.start(
        "--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE",
        "--payments.provider.timeout-after-commit-rate=0.3", "--payments.provider.error-rate=0.2",
        "--payments.provider.seed=7", "--idem.completer.interval=1s", "--idem.default-lease=2s");
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  @Test
  void everyPaymentIntentEndsInOnePaymentDespiteProviderFaults() throws Exception {
    // The client honours Retry-After (1 s from the service) with a shortened real wait: backoff, not synchronisation.
    IdempotentHttpClient client = IdempotentHttpClient.builder().name("faults-test")
        .headers(() -> Map.of("Authorization", "Bearer sk_test_alice", "Content-Type", "application/json"))
        .sleeper(d -> LockSupport.parkNanos(Math.min(d.toNanos(), TimeUnit.MILLISECONDS.toNanos(20))))
        .build();
    ExecutorService pool = Executors.newFixedThreadPool(8);
    List<Future<Response>> answers = new ArrayList<>();
    List<String> accounts = new ArrayList<>();
    try {
      for (int i = 0; i < INTENTS; i++) {
        String account = "acct_client_" + i + "_" + UUID.randomUUID().toString().substring(0, 8);
        accounts.add(account);
        Intent intent = Intent.post(service.uri("/payments"), ("{\"account_id\":\"" + account
            + "\",\"amount\":" + (100 + i) + ",\"currency\":\"EUR\"}").getBytes(StandardCharsets.UTF_8))
            .withKey("intent-" + UUID.randomUUID());
        answers.add(pool.submit(() -> untilFinal(client, intent)));
      }
      for (int i = 0; i < INTENTS; i++) {
        Response r = answers.get(i).get(120, TimeUnit.SECONDS);
        assertThat(r.status()).as(r.toString()).isEqualTo(201);
        String account = accounts.get(i);
        assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", account)).isEqualTo(1);
        assertThat(service.count("SELECT COUNT(*) FROM pay_provider_charge WHERE account_id = ?", account))
            .isEqualTo(1);
        assertThat(service.count("SELECT COUNT(*) FROM pay_ledger_entry WHERE account_id = ?", account))
            .isEqualTo(1);
      }
    } finally {
      pool.shutdownNow();
    }
    Answer stats = service.get("/admin/provider/stats", null);
    assertThat(stats.json().path("charges").asLong()).isEqualTo(INTENTS);
    assertThat(stats.json().path("duplicate_charge_attempts").asLong())
        .as("timeouts after commit happened, and the retries reused the derived key").isPositive();
  }

  /**
   * Sends the intent until its answer is final. A pending intent (retries used up, for example while the completer
   * holds a failed payment for a lease) is sent again with its key, until a deadline.
   */
  private static Response untilFinal(IdempotentHttpClient client, Intent intent) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (true) {
      try {
        return client.send(intent);
      } catch (IntentPendingException pending) {
        if (System.nanoTime() > deadline) {
          throw pending;
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
      }
    }
  }
}
