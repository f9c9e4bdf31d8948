package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * A client process is killed with SIGKILL after it sent a payment and before the answer arrived (the provider is slow).
 * The lease is short so that the resumed client's wait on a 409 (Retry-After = seconds left on the lease) stays
 * within its deadline.
 * A new client process resumes the pending intent from its journal with the original key, and the service applied
 * the payment exactly once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientCrashResumeTest {
  @TempDir
  static Path data;

  private RunningService service;

  @BeforeAll
  void start() {
    service = RunningService.start(
        "--spring.datasource.url=jdbc:h2:file:" + data.resolve("payments") + ";WRITE_DELAY=0;AUTO_SERVER=FALSE",
        "--payments.provider.latency-ms=1500", "--idem.default-lease=3s");
  }

  @AfterAll
  void stop() {
    if (service != null) {
      service.close();
    }
  }

  @Test
  void killedClientResumesItsPendingIntentAndThePaymentHappensOnce() throws Exception {
    String key = "crash-" + UUID.randomUUID();
    String account = "acct_crash_" + UUID.randomUUID().toString().substring(0, 8);
    Path journal = data.resolve("client.journal");
    String base = service.uri("/").toString();

    Process sender = client(List.of("send", base, journal.toString(), key, account), data.resolve("send.log"));
    try {
      awaitInProgress(key, sender);
      sender.destroyForcibly();
      assertThat(sender.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(Files.readString(data.resolve("send.log"))).contains("SENDING").doesNotContain("ANSWERED");
    } finally {
      sender.destroyForcibly();
    }

    Process resumer = client(List.of("resume", base, journal.toString()), data.resolve("resume.log"));
    assertThat(resumer.waitFor(120, TimeUnit.SECONDS)).as("resume finished").isTrue();
    String resumed = Files.readString(data.resolve("resume.log"));

    assertThat(resumer.exitValue()).as(resumed).isZero();
    assertThat(resumed).contains("RESUMED 201 " + key, "PENDING 0");
    assertThat(service.count("SELECT COUNT(*) FROM pay_payment WHERE account_id = ?", account)).isEqualTo(1);
    assertThat(service.count("SELECT COUNT(*) FROM pay_provider_charge WHERE account_id = ?", account)).isEqualTo(1);
    assertThat(service.count("SELECT COUNT(*) FROM pay_ledger_entry WHERE account_id = ?", account)).isEqualTo(1);
  }

  private static Process client(List<String> args, Path log) throws IOException {
    List<String> command = new java.util.ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", System.getProperty("java.class.path"), ClientIntentMain.class.getName()));
    command.addAll(args);
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  /** Polls the service until the payment's record is in progress: the request was sent and is being answered. */
  private void awaitInProgress(String key, Process sender) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (service.count("SELECT COUNT(*) FROM idem_record WHERE idem_key = ? AND state = 'in_progress'", key) == 1) {
        return;
      }
      assertThat(sender.isAlive()).as("the client is still waiting for its answer").isTrue();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
    throw new AssertionError("the payment never reached the service");
  }
}
