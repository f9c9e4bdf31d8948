package dev.idem.examples.payments;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The operator console end to end, in headless Chromium: {@code src/test/console/e2e.mjs} (playwright-core, pinned
 * in that folder's package-lock.json) pays through the API, finds the payment's record in the console, sees the
 * payment's webhook dead in the outbox, replays it once the endpoint recovers and sees it delivered, and completes a
 * payment made uncertain by a provider outage (a resume cap of 2) with an answer and a reason, audited. This test
 * starts the service with the loopback exemption off, so that the browser goes through the admin key like a remote
 * operator's, and a webhook endpoint that answers 500 until the script tells it to recover; then it checks that the
 * endpoint received the replayed event.
 *
 * <p>Needs Node.js with npm, and Debian's Chromium at /usr/bin/chromium ({@code .ci/run} installs it): without
 * them the test fails, it never skips. {@code npm ci} runs when {@code node_modules} lacks the pinned playwright-core.
 * Screenshots of every step and the script's output go to {@code target/surefire-reports/console/}.
 */
class ConsoleBrowserTest {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final String ADMIN_KEY = "sk_admin_console_" + UUID.randomUUID().toString().replace("-", "");
  private static final Caller ALICE = new Caller("sk_test_alice", "alice");
  private static final Duration NPM_TIMEOUT = Duration.ofMinutes(5);
  private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(5);
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final Path module = Path.of(System.getProperty("basedir", "")).toAbsolutePath();
  private final Path scripts = module.resolve("src/test/console");
  private final Path report = module.resolve("target/surefire-reports/console");

  @Test
  void aPaymentsRecordAndItsDeadWebhookShowInTheConsoleAndAReplayDeliversIt() throws Exception {
    if (!Files.isExecutable(CHROMIUM)) {
      fail(CHROMIUM + " is missing: the console's browser test needs Debian's Chromium"
          + " (DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; .ci/run does this)");
    }
    prepareReport();
    installPlaywright();
    try (RunningService service = RunningService.start(
            "--spring.datasource.url=jdbc:h2:mem:console-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
            "--payments.admin-allow-loopback=false", "--payments.admin-key=" + ADMIN_KEY,
            "--payments.outbox.poll-interval=50ms", "--payments.outbox.max-attempts=2",
            "--payments.outbox.backoff-initial=200ms", "--payments.outbox.backoff-max=200ms",
            "--idem.default-resume-cap-attempts=2");
        WebhookSink sink = WebhookSink.start();
        SinkControl control = SinkControl.of(sink)) {
      sink.answer(500);
      Answer endpoint = service.post("/webhook-endpoints", ALICE.apiKey(), null,
          "{\"url\":\"" + sink.url() + "\",\"events\":[\"payment.succeeded\"]}");
      assertThat(endpoint.status()).as(endpoint.toString()).isEqualTo(201);
      sink.secret(endpoint.json().path("secret").asString());

      Run e2e = run(List.of("node", "e2e.mjs"), Map.of(
          "BASE_URL", service.uri("/").toString(),
          "ADMIN_KEY", ADMIN_KEY,
          "TENANT_KEY", ALICE.apiKey(),
          "SINK_CONTROL_URL", control.url(),
          "SCREENSHOT_DIR", report.toString(),
          "CHROMIUM", CHROMIUM.toString()), report.resolve("e2e.log"), SCRIPT_TIMEOUT);

      assertThat(e2e.exitCode()).as("node e2e.mjs failed; its output:%n%s", e2e.output()).isZero();
      String paymentId = e2e.value("PAYMENT_ID");
      String eventId = e2e.value("EVENT_ID");
      List<WebhookSink.Delivery> accepted = sink.accepted(paymentId);
      assertThat(accepted).as("the endpoint accepted the replayed event once").hasSize(1);
      assertThat(accepted.get(0).webhookId()).isEqualTo(eventId);
      assertThat(sink.about(paymentId)).as("two refused attempts, then the replay")
          .extracting(WebhookSink.Delivery::answered).containsExactly(500, 500, 200);
      JsonNode event = service.get("/admin/outbox/" + eventId, ADMIN_KEY).json();
      assertThat(event.path("status").asString()).isEqualTo("delivered");
      try (DirectoryStream<Path> shots = Files.newDirectoryStream(report, "*.png")) {
        assertThat(shots).as("a screenshot per step in " + report).hasSizeGreaterThanOrEqualTo(8);
      }
    }
  }

  private void prepareReport() throws IOException {
    Files.createDirectories(report);
    try (DirectoryStream<Path> old = Files.newDirectoryStream(report, "*.png")) {
      for (Path p : old) {
        Files.delete(p);
      }
    }
  }

  /** {@code npm ci} unless node_modules holds the playwright-core version that package.json pins. */
  private void installPlaywright() throws Exception {
    String pinned = JSON.readTree(scripts.resolve("package.json").toFile()).path("dependencies")
        .path("playwright-core").asString();
    Path installed = scripts.resolve("node_modules/playwright-core/package.json");
    if (Files.exists(installed) && JSON.readTree(installed.toFile()).path("version").asString().equals(pinned)) {
      return;
    }
    Run npm = run(List.of("npm", "ci", "--no-audit", "--no-fund"), Map.of(), report.resolve("npm.log"),
        NPM_TIMEOUT);
    assertThat(npm.exitCode()).as("npm ci in %s failed; its output:%n%s", scripts, npm.output()).isZero();
  }

  /** Runs a command in the scripts' folder, its output (stdout and stderr) to {@code log}. */
  private Run run(List<String> command, Map<String, String> environment, Path log, Duration timeout)
      throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).directory(scripts.toFile()).redirectErrorStream(true)
        .redirectOutput(log.toFile());
    builder.environment().putAll(environment);
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new AssertionError("cannot run " + String.join(" ", command) + " (the console's browser test needs"
          + " Node.js 20 and npm on the PATH): " + e.getMessage(), e);
    }
    if (!process.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly().waitFor();
      fail(String.join(" ", command) + " did not finish within " + timeout + "; its output:\n"
          + Files.readString(log, StandardCharsets.UTF_8));
    }
    return new Run(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
  }

  /** What a command ended with. */
  private record Run(int exitCode, String output) {
    /** The value of a {@code NAME=value} line the script printed. */
    String value(String name) {
      Matcher m = Pattern.compile("^" + name + "=(\\S+)$", Pattern.MULTILINE).matcher(output);
      assertThat(m.find()).as("the script printed %s=...; its output:%n%s", name, output).isTrue();
      return m.group(1);
    }
  }

  /** A small HTTP server on 127.0.0.1: {@code POST /accept} makes the sink answer 200 from then on. */
  private static final class SinkControl implements AutoCloseable {
    private final HttpServer server;

    private SinkControl(HttpServer server) {
      this.server = server;
    }

    static SinkControl of(WebhookSink sink) throws IOException {
      HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      server.createContext("/accept", exchange -> {
        try (exchange) {
          if (exchange.getRequestMethod().equals("POST")) {
            sink.answer(200);
            exchange.sendResponseHeaders(204, -1);
          } else {
            exchange.sendResponseHeaders(405, -1);
          }
        }
      });
      server.start();
      return new SinkControl(server);
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/accept";
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }
}
