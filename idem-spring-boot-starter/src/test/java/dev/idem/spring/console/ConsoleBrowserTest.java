package dev.idem.spring.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.assertj.core.groups.Tuple.tuple;

import dev.idem.core.AuditEntry;
import dev.idem.core.Idem;
import dev.idem.core.RecordKey;
import dev.idem.core.RecordState;
import dev.idem.jdbc.JdbcTransaction;
import dev.idem.outbox.Outbox;
import dev.idem.outbox.OutboxEvent;
import dev.idem.outbox.OutboxStatus;
import dev.idem.test.Eventually;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The console end to end in headless Chromium, mounted by the starter in {@link ConsoleApp} on PostgreSQL:
 * {@code src/test/console/e2e.mjs} (playwright-core, pinned in that folder's package-lock.json) checks the page's
 * Content-Security-Policy, signs in with the application's token, finds an uncertain record and completes it with an
 * answer and a reason, sees a dead letter and replays it until it is delivered, and shows that a page of another
 * site can neither post a form to the console nor call it with its header. Then this test checks the store, the
 * outbox and the audit: the record completed by {@code ops (console)}, the event delivered, the other event still
 * dead and no action taken on it.
 *
 * <p>Needs Node.js with npm, and Debian's Chromium at /usr/bin/chromium: without them the test fails, it never skips.
 * The scripts are copied to {@code target/console-e2e}, where {@code npm ci} installs the pinned playwright-core
 * when it is missing. Screenshots and the script's output go to {@code target/surefire-reports/console/}.
 */
class ConsoleBrowserTest {
  private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
  private static final Duration NPM_TIMEOUT = Duration.ofMinutes(5);
  private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(5);
  private static final Duration DEADLINE = Duration.ofSeconds(30);

  private final Path module = Path.of(System.getProperty("basedir", "")).toAbsolutePath();
  private final Path scripts = module.resolve("target/console-e2e");
  private final Path report = module.resolve("target/surefire-reports/console");

  @Test
  void anOperatorResolvesAnUncertainRecordAndReplaysADeadLetterWhileOtherSitesAreRefused() throws Exception {
    if (!Files.isExecutable(CHROMIUM)) {
      fail(CHROMIUM + " is missing: the console's browser test needs Debian's Chromium"
          + " (DEBIAN_FRONTEND=noninteractive apt-get install -y chromium)");
    }
    prepare();
    try (ConfigurableApplicationContext context = ConsoleStarter.run("/ops/console")) {
      ConsoleApp app = context.getBean(ConsoleApp.class);
      String key = ConsoleStarter.uncertainRecord(context, "browser");
      UUID replayed = deadEvent(context);
      UUID attacked = deadEvent(context);
      app.endpointUp.set(true);
      int port = ((WebServerApplicationContext) context).getWebServer().getPort();

      Run e2e = run(List.of("node", "e2e.mjs"), Map.of(
          "BASE_URL", "http://127.0.0.1:" + port,
          "CONSOLE_PATH", "/ops/console",
          "TOKEN", ConsoleApp.TOKEN,
          "UNCERTAIN_KEY", key,
          "EVENT_ID", replayed.toString(),
          "CROSS_SITE_EVENT_ID", attacked.toString(),
          "SCREENSHOT_DIR", report.toString(),
          "CHROMIUM", CHROMIUM.toString()), report.resolve("e2e.log"), SCRIPT_TIMEOUT);

      assertThat(e2e.exitCode()).as("node e2e.mjs failed; its output:%n%s", e2e.output()).isZero();
      assertThat(ConsoleStarter.state(context, key)).isEqualTo(RecordState.COMPLETED);
      List<AuditEntry> history = context.getBean(Idem.class).history(RecordKey.of("tenant-a",
          ConsoleStarter.OPERATION, key));
      assertThat(history).extracting(AuditEntry::actor, AuditEntry::reason)
          .containsExactly(tuple("ops (console)", "the provider shows the charge"));
      Outbox outbox = context.getBean(Outbox.class);
      Eventually.await("the replayed event is delivered", DEADLINE, () -> outbox.find(replayed).orElseThrow()
          .status(), s -> s == OutboxStatus.DELIVERED);
      assertThat(outbox.find(attacked).orElseThrow().status()).as("the other site's discard was refused")
          .isEqualTo(OutboxStatus.DEAD);
      assertThat(app.actions).filteredOn(a -> a.target().contains(key) || a.target().contains(replayed.toString())
          || a.target().contains(attacked.toString())).extracting(a -> a.operator() + " " + a.action() + " "
          + a.outcome()).containsExactly("ops record.resolve done", "ops outbox.replay done");
      try (DirectoryStream<Path> shots = Files.newDirectoryStream(report, "*.png")) {
        assertThat(shots).as("a screenshot per step in " + report).hasSizeGreaterThanOrEqualTo(6);
      }
    }
  }

  private static UUID deadEvent(ConfigurableApplicationContext context) {
    Outbox outbox = context.getBean(Outbox.class);
    DataSource dataSource = context.getBean(DataSource.class);
    String aggregate = "order-" + UUID.randomUUID();
    OutboxEvent event = OutboxEvent.builder("order.paid").aggregate("order", aggregate)
        .payload("{\"order\":\"" + aggregate + "\"}").destination("hook:orders").build();
    new TransactionTemplate(context.getBean(PlatformTransactionManager.class)).executeWithoutResult(status ->
        outbox.enqueue(JdbcTransaction.of(DataSourceUtils.getConnection(dataSource)), event));
    Eventually.await("event " + event.id() + " is dead", DEADLINE, () -> outbox.find(event.id()).orElseThrow()
        .status(), s -> s == OutboxStatus.DEAD);
    return event.id();
  }

  /** Copies the scripts next to their node_modules in target/, runs npm ci when the pinned version is missing. */
  private void prepare() throws Exception {
    Files.createDirectories(report);
    try (DirectoryStream<Path> old = Files.newDirectoryStream(report, "*.png")) {
      for (Path p : old) {
        Files.delete(p);
      }
    }
    Files.createDirectories(scripts);
    for (String file : List.of("e2e.mjs", "package.json", "package-lock.json")) {
      Files.copy(module.resolve("src/test/console").resolve(file), scripts.resolve(file),
          StandardCopyOption.REPLACE_EXISTING);
    }
    Path installed = scripts.resolve("node_modules/playwright-core/package.json");
    if (Files.exists(installed) && Files.readString(installed).contains("\"version\": \"1.64.1\"")) {
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
  private record Run(int exitCode, String output) {}
}
