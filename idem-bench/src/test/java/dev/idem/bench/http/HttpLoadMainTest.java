package dev.idem.bench.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HttpLoadMainTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return HttpLoadMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "--url http://127.0.0.1:1/x --bogus 1 | unknown flag --bogus",
      "--url http://127.0.0.1:1/x extra | unexpected argument \"extra\"",
      "--url | --url needs a value",
      "--seconds 1 | --url is required",
      "--url http://example.com/x | http://example.com/x",
      "--url http://127.0.0.1:1/x --concurrency many | --concurrency must be an integer, got \"many\"",
      "--url http://127.0.0.1:1/x --concurrency 0 | --concurrency: concurrency must be between 1 and 1024, got 0",
      "--url http://127.0.0.1:1/x --passes -1 | --passes: passes must be between 1 and 1000, got -1",
      "--url http://127.0.0.1:1/x --keys pool:0 | --keys: pool size must be at least 1, got 0",
      "--url http://127.0.0.1:1/x --keys sometimes | --keys: keys must be none, unique or pool:N",
      "--url http://127.0.0.1:1/x --header NoColon | --header must look like 'Name: value', got \"NoColon\"",
      "--url http://127.0.0.1:1/x --method get | method must be an upper-case token",
      "--url http://127.0.0.1:1/x --expect 200,x | --expect must be an integer list, got \"200,x\"",
      "--url http://127.0.0.1:1/x --url http://127.0.0.1:1/y | --url given more than once",
      "--url http://127.0.0.1:1/x --baseline-name b | need --baseline-url",
      "--url http://127.0.0.1:1/x --baseline-url http://127.0.0.1:1/y --name b --baseline-name b | must differ"})
  void rejectsBadFlagsWithUsageAndExitCode2(String args, String message) {
    assertThat(run(args.split(" "))).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("error: ", message, "usage: HttpLoadMain");
    assertThat(out.size()).isZero();
  }

  @Test
  void helpPrintsUsage() {
    assertThat(run("--help")).isZero();
    assertThat(out.toString(StandardCharsets.UTF_8)).contains("usage: HttpLoadMain", "--keys none|unique|pool:N");
  }

  @Test
  void parsesIntoBaselineFirstScenarios() {
    HttpLoadMain.Plan plan = HttpLoadMain.parse(new String[] {"--url", "http://127.0.0.1:1/x", "--baseline-url",
        "http://localhost:1/y", "--header", "Authorization: Bearer sk_test_alice", "--header",
        "Content-Type:application/json", "--body", "{}", "--keys", "pool:4", "--baseline-keys", "none",
        "--expect", "200,201", "--concurrency", "3", "--seconds", "2", "--passes", "4", "--warmup", "0"}, line -> { });

    assertThat(plan.harness().concurrency()).isEqualTo(3);
    assertThat(plan.harness().passSeconds()).isEqualTo(2);
    assertThat(plan.harness().passes()).isEqualTo(4);
    assertThat(plan.harness().warmupSeconds()).isZero();
    assertThat(plan.json()).isNull();
    List<Scenario> s = plan.scenarios();
    assertThat(s).extracting(Scenario::name).containsExactly("baseline", "idem");
    assertThat(s).extracting(Scenario::keys).containsExactly(KeyStrategy.none(), KeyStrategy.fixedPool(4));
    assertThat(s).allSatisfy(x -> {
      assertThat(x.method()).isEqualTo("POST");
      assertThat(x.headers()).containsExactly(Map.entry("Authorization", "Bearer sk_test_alice"),
          Map.entry("Content-Type", "application/json"));
      assertThat(x.expectedStatuses()).containsExactly(200, 201);
      assertThat(new String(x.bodyFor(0), StandardCharsets.UTF_8)).isEqualTo("{}");
    });
  }

  @Test
  void runsAgainstALocalServerAndWritesJson(@TempDir Path dir) throws IOException {
    try (LocalServer server = new LocalServer()) {
      Path json = dir.resolve("report.json");
      int status = run("--url", server.url("/keyed/x"), "--baseline-url", server.url("/plain"), "--method", "POST",
          "--header", "Content-Type: application/json", "--body", "{\"amount\":1}", "--keys", "unique",
          "--concurrency", "2", "--seconds", "1", "--passes", "2", "--warmup", "0", "--json", json.toString());

      assertThat(status).as(err.toString(StandardCharsets.UTF_8)).isZero();
      assertThat(out.toString(StandardCharsets.UTF_8)).contains("| baseline |", "| idem |", "| idem / baseline |");
      assertThat(err.toString(StandardCharsets.UTF_8)).contains("pass 2/2 idem");
      assertThat(Files.readString(json)).contains("\"numerator\":\"idem\",\"denominator\":\"baseline\"");
      assertThat(server.seen("/keyed/x")).isNotEmpty().allSatisfy(r -> {
        assertThat(r.method()).isEqualTo("POST");
        assertThat(r.body()).isEqualTo("{\"amount\":1}");
        assertThat(r.header(KeyStrategy.HEADER)).isNotNull();
      });
    }
  }
}
