package dev.idem.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code idem chaos}: its flags are checked before anything starts, and the short preset (the CI one) holds every
 * invariant against the real PostgreSQL, PostgreSQL restart included.
 */
class ChaosCommandTest {

  private static String[] run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(args, new ByteArrayInputStream(new byte[0]),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    return new String[] {Integer.toString(status), out.toString(StandardCharsets.UTF_8),
        err.toString(StandardCharsets.UTF_8)};
  }

  @Test
  void badFlagsAreUsageErrorsNamingTheFlagAndValue() {
    assertThat(run("chaos", "--rate", "0")[2]).contains("--rate must be a number above 0 to 500, got '0'");
    assertThat(run("chaos", "--rate", "abc")[0]).isEqualTo("2");
    assertThat(run("chaos", "--duration", "2s")[2]).contains("--duration must be between 5s and 24h, got '2s'");
    assertThat(run("chaos", "--duration", "ten")[2]).contains("--duration must be a duration such as 90s");
    assertThat(run("chaos", "--instances", "9")[2]).contains("--instances must be 1..8, got '9'");
    assertThat(run("chaos", "--seed", "x")[2]).contains("--seed must be an integer, got 'x'");
    assertThat(run("chaos", "--db", "jdbc:mariadb://127.0.0.1/test")[2]).contains("--db must be h2 or a PostgreSQL");
    assertThat(run("chaos", "--fault-rate", "1.5")[2]).contains("--fault-rate must be a number from 0 to 0.9");
    assertThat(run("chaos", "--kill-every", "1s")[2]).contains("--kill-every must be at least 5s or none");
    assertThat(run("chaos", "--duration", "30s", "--kill-every", "40s")[2]).contains("must be shorter than --duration");
    assertThat(run("chaos", "--pg-restart-at", "1.5")[2])
        .contains("--pg-restart-at must be a number above 0 to 1, got '1.5'");
    assertThat(run("chaos", "--duration", "30s", "--pg-restart-at", "40s")[2]).contains("must fall inside --duration");
    assertThat(run("chaos", "--preset", "medium")[2]).contains("--preset must be short or long, got 'medium'");
    assertThat(run("chaos", "--db", "h2", "--instances", "3")[2]).contains("--instances must be 1 with --db h2");
    assertThat(run("chaos", "--db", "h2", "--pg-restart-at", "0.5")[2]).contains("use --pg-restart-at none");
    assertThat(run("chaos", "--db", "jdbc:postgresql://db.example:5432/test")[2])
        .contains("restarts the PostgreSQL of this machine");
    assertThat(run("chaos", "--rate")[2]).contains("--rate needs a value");
    assertThat(run("chaos", "--provider-down", "2s")[2]).contains("--provider-down must be at least 5s or none");
    assertThat(run("chaos", "--duration", "60s", "--provider-down", "50s")[2])
        .contains("--provider-down (50s) must end before 90% of --duration (60s)");
    String[] unknown = run("chaos", "--speed", "3");

    assertThat(unknown[0]).isEqualTo("2");
    assertThat(unknown[2]).contains("unknown option '--speed'", "idem chaos --help");
  }

  @Test
  void credentialsInTheDatabaseUrlAreRedacted() {
    String url = "jdbc:postgresql://127.0.0.1:5432/test?user=postgres&password=hunter2&ssl=false";

    assertThat(ChaosSettings.redact(url)).isEqualTo("jdbc:postgresql://127.0.0.1:5432/test?user=postgres"
        + "&password=***&ssl=false");
    assertThat(ChaosSettings.redact("failed: jdbc:postgresql://bob:pw@db:5432/x?password=p2 refused"))
        .isEqualTo("failed: jdbc:postgresql://***@db:5432/x?password=*** refused");
    assertThat(run("chaos", "--db", "jdbc:mysql://h/x?password=hunter2")[2]).doesNotContain("hunter2");
    assertThat(ChaosSettings.port(url)).isEqualTo(5432);
    assertThat(ChaosSettings.port("jdbc:postgresql://localhost/test")).isEqualTo(5432);
  }

  @Test
  void theSecretsCheckNamesWhereASecretLeakedWithoutPrintingIt(@TempDir Path dir) throws Exception {
    // the endpoints' signing secrets are sealed at rest: one in clear text in their own column is a leak too
    Files.writeString(dir.resolve("instance-0.log"), "started\nGET /payments Authorization: Bearer sk_leak_1\n");
    ChaosInvariants invariants = new ChaosInvariants();
    try (Connection c = DriverManager.getConnection("jdbc:h2:mem:chaos_secrets;DB_CLOSE_DELAY=-1")) {
      try (java.sql.Statement st = c.createStatement()) {
        st.execute("CREATE TABLE pay_webhook_endpoint (id VARCHAR(40), secret VARCHAR(200))");
        st.execute("CREATE TABLE idem_record (idem_key VARCHAR(40), response_body VARBINARY(1000))");
        st.execute("INSERT INTO pay_webhook_endpoint VALUES ('we_1', 'whsec_c2VjcmV0')");
        st.execute("INSERT INTO pay_webhook_endpoint VALUES ('we_2', 'idem:enc:1:AGllAQJrMQ==')");
        st.execute("INSERT INTO idem_record VALUES ('k1', CAST('{\"secret\":\"whsec_c2VjcmV0\"}' AS VARBINARY))");
      }

      invariants.checkSecretsAbsent(c, dir, java.util.List.of(
          new ChaosInvariants.Secret("the API key", "sk_leak_1"),
          new ChaosInvariants.Secret("the webhook secret", "whsec_c2VjcmV0")));
    }

    ChaosInvariants.Result result = invariants.results().get(0);
    assertThat(result.passed()).isFalse();
    assertThat(result.detail()).contains("instance-0.log:2 holds the API key",
        "IDEM_RECORD.RESPONSE_BODY holds the webhook secret in 1 row(s)",
        "PAY_WEBHOOK_ENDPOINT.SECRET holds the webhook secret in 1 row(s)", "found: 3")
        .doesNotContain("sk_leak_1", "c2VjcmV0");
  }

  @Test
  void theRefusalCheckFailsForARefusedPaymentThatWasBookedOrCharged() throws Exception {
    ChaosSettings settings = ChaosSettings.parse(java.util.List.of("--db", "h2", "--pg-restart-at", "none"));
    ChaosWorkload workload = new ChaosWorkload(settings, java.util.List.of(),
        new ChaosWorkload.ChaosTimeline(settings.duration()));
    workload.refusedPayments.add("pay_booked");
    workload.refusedPayments.add("pay_missing");
    workload.refusedRefunds.add("re_ok");
    ChaosInvariants invariants = new ChaosInvariants();
    try (Connection c = DriverManager.getConnection("jdbc:h2:mem:chaos_refusals;DB_CLOSE_DELAY=-1")) {
      try (java.sql.Statement st = c.createStatement()) {
        st.execute("CREATE TABLE pay_payment (id VARCHAR(40), status VARCHAR(20), provider_charge_id VARCHAR(40))");
        st.execute("CREATE TABLE pay_refund (id VARCHAR(40), status VARCHAR(20), provider_refund_id VARCHAR(40))");
        st.execute("CREATE TABLE pay_ledger_entry (reference_id VARCHAR(40))");
        st.execute("INSERT INTO pay_payment VALUES ('pay_booked', 'failed', NULL), ('pay_charged', 'failed', 'ch_1'),"
            + " ('pay_ok', 'captured', 'ch_2')");
        st.execute("INSERT INTO pay_refund VALUES ('re_ok', 'failed', NULL)");
        st.execute("INSERT INTO pay_ledger_entry VALUES ('pay_booked'), ('pay_ok')");
      }

      invariants.checkRefusals(c, workload);
    }

    ChaosInvariants.Result result = invariants.results().get(0);
    assertThat(result.passed()).isFalse();
    assertThat(result.detail()).contains("wrong: 3", "payment pay_charged failed but has provider charge ch_1",
        "payment pay_missing was refused but is not in the database",
        "payment pay_booked failed but is booked in the ledger").doesNotContain("re_ok", "pay_ok");
  }

  @Test
  void flagsOverrideThePresetWhateverTheirOrder() throws Exception {
    ChaosSettings s = ChaosSettings.parse(java.util.List.of("--rate=7", "--preset", "long", "--db", "h2",
        "--pg-restart-at", "none", "--kill-every", "none"));

    assertThat(s.rate()).isEqualTo(7);
    assertThat(s.duration()).hasMinutes(10);
    assertThat(s.instances()).isEqualTo(1);
    assertThat(s.killEvery()).isNull();
    assertThat(s.pgRestartAt()).isNull();
  }

  @Test
  void theRefusalRateIsANumberFrom0To09AndDefaultsTo0() throws Exception {
    String[] high = run("chaos", "--refusal-rate", "1");

    assertThat(high[0]).isEqualTo("2");
    assertThat(high[2]).contains("--refusal-rate must be a number from 0 to 0.9, got '1'");
    assertThat(run("chaos", "--refusal-rate", "-0.1")[2]).contains("--refusal-rate must be a number from 0 to 0.9");
    assertThat(run("chaos", "--refusal-rate", "NaN")[2]).contains("got 'NaN'");
    assertThat(run("chaos", "--refusal-rate")[2]).contains("--refusal-rate needs a value");
    assertThat(ChaosSettings.parse(java.util.List.of("--refusal-rate=0.3")).refusalRate()).isEqualTo(0.3);
    assertThat(ChaosSettings.parse(java.util.List.of("--preset", "long")).refusalRate()).isZero();
  }

  @Test
  void theProviderGoesDownForTheDurationGivenFromAQuarterOfTheWorkloadOn() throws Exception {
    ChaosSettings down = ChaosSettings.parse(java.util.List.of("--duration", "80s", "--provider-down", "30s"));

    assertThat(down.providerDown()).isEqualTo(Duration.ofSeconds(30));
    assertThat(down.providerDownAt()).isEqualTo(Duration.ofSeconds(20));
    assertThat(ChaosSettings.parse(java.util.List.of("--provider-down", "none")).providerDown()).isNull();
    assertThat(ChaosSettings.parse(java.util.List.of()).providerDown()).as("off by default").isNull();
  }

  @Test
  void helpListsEveryFlag() {
    String[] r = run("chaos", "--help");

    assertThat(r[0]).isEqualTo("0");
    assertThat(r[1]).contains("--duration", "--rate", "--instances", "--seed", "--db", "--kill-every",
        "--pg-restart-at", "--fault-rate", "--refusal-rate", "--provider-down", "--report", "--preset short|long");
  }

  @Test
  @Timeout(value = 3, unit = TimeUnit.MINUTES)
  void permanentRefusalsEndFailedUnbookedAndLeaveNoRecordInProgress(@TempDir Path dir) throws Exception {
    Path report = dir.resolve("report");

    String[] r = run("chaos", "--duration", "10s", "--rate", "10", "--instances", "2", "--kill-every", "none",
        "--pg-restart-at", "none", "--fault-rate", "0", "--refusal-rate", "0.3", "--report", report.toString());
    System.out.print(r[1]);

    assertThat(r[0]).as("exit status; stdout:%n%s%nstderr:%n%s", r[1], r[2]).isEqualTo("0");
    JsonNode json = JsonMapper.builder().build().readTree(Files.readString(report.resolve("report.json")));
    java.util.Map<String, JsonNode> invariants = new java.util.HashMap<>();
    for (JsonNode invariant : json.path("invariants")) {
      assertThat(invariant.path("passed").asBoolean()).as(invariant.toString()).isTrue();
      invariants.put(invariant.path("name").asString(), invariant);
    }
    assertThat(invariants).containsKeys("no record left in progress after the completer's window",
        "refused payments and refunds are failed, never booked nor charged",
        "every replay is byte-identical to the first answer for its key", "ledger totals equal provider totals");
    JsonNode counts = json.path("counts");
    assertThat(counts.path("refused_payments_422").asLong()).isPositive();
    assertThat(counts.path("acknowledged_payments").asLong()).isPositive();
    assertThat(counts.path("final_statuses").path("422").asLong()).isPositive();
    assertThat(counts.path("faults").path("provider_refusal_rate").asDouble()).isEqualTo(0.3);
    assertThat(json.path("settings").path("refusal_rate").asDouble()).isEqualTo(0.3);
  }

  @Test
  @Timeout(value = 6, unit = TimeUnit.MINUTES)
  void shortPresetHoldsEveryInvariantThroughKillsAndAPostgresRestart(@TempDir Path dir) throws Exception {
    Path report = dir.resolve("report");

    String[] r = run("chaos", "--preset", "short", "--report", report.toString());
    System.out.print(r[1]);

    assertThat(r[0]).as("exit status; stdout:%n%s%nstderr:%n%s", r[1], r[2]).isEqualTo("0");
    JsonNode json = JsonMapper.builder().build().readTree(Files.readString(report.resolve("report.json")));
    assertThat(json.path("passed").asBoolean()).isTrue();
    assertThat(json.path("invariants").size()).isGreaterThanOrEqualTo(10);
    java.util.List<String> names = new java.util.ArrayList<>();
    for (JsonNode invariant : json.path("invariants")) {
      assertThat(invariant.path("passed").asBoolean()).as(invariant.toString()).isTrue();
      names.add(invariant.path("name").asString());
    }
    assertThat(names).contains("the run exercised what it claims",
        "no secret or Authorization header in the logs or the tables");
    JsonNode faults = json.path("counts").path("faults");
    assertThat(faults.path("kills").asLong()).isPositive();
    assertThat(faults.path("postgres_restarts").asLong()).isEqualTo(1);
    assertThat(json.path("counts").path("acknowledged_payments").asLong()).isPositive();
    BufferedImage chart = ImageIO.read(report.resolve("chart.png").toFile());
    assertThat(chart).isNotNull();
    assertThat(chart.getWidth()).isEqualTo(1200);
    String database = json.path("settings").path("database").asString();
    assertThat(database).startsWith("idem_chaos_");
    try (Connection c = DriverManager.getConnection(ChaosSettings.DEFAULT_DB);
        PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM pg_database WHERE datname = ?")) {
      ps.setString(1, database);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertThat(rs.getLong(1)).as("databases named %s after the run", database).isZero();
      }
    }
  }
}
