package dev.idem.bench.http;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The reference service's benchmark: {@code POST /baseline/payments} (the same work without the idempotency layer)
 * against {@code POST /payments} with a fresh key per request (first executions) and with a pool of keys sent
 * before (replays), alternating passes in one run. Prints the Markdown report and the ratios; the service must
 * already run (see {@code idem-bench/scripts/payments-http.sh}).
 *
 * <pre>
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.http.PaymentsServiceLoad \
 *   --base http://127.0.0.1:18080 [--concurrency 16] [--seconds 10] [--passes 6] [--warmup 5] [--json out.json]
 * </pre>
 */
public final class PaymentsServiceLoad {
  private PaymentsServiceLoad() {}

  public static void main(String[] args) throws Exception {
    String base = "http://127.0.0.1:18080";
    int concurrency = 16;
    int seconds = 10;
    int passes = 6;
    int warmup = 5;
    String jsonOut = null;
    for (int i = 0; i < args.length; i++) {
      String flag = args[i];
      if (i + 1 >= args.length) {
        usage("missing value for " + flag);
      }
      String v = args[++i];
      switch (flag) {
        case "--base": base = v; break;
        case "--concurrency": concurrency = Integer.parseInt(v); break;
        case "--seconds": seconds = Integer.parseInt(v); break;
        case "--passes": passes = Integer.parseInt(v); break;
        case "--warmup": warmup = Integer.parseInt(v); break;
        case "--json": jsonOut = v; break;
        default: usage("unknown flag " + flag);
      }
    }
    String body = "{\"account_id\":\"acct_bench\",\"amount\":100,\"currency\":\"EUR\"}";
    List<Scenario> scenarios = List.of(
        scenario("baseline", base + "/baseline/payments", KeyStrategy.none(), body),
        scenario("idem-first", base + "/payments", KeyStrategy.unique(), body),
        scenario("idem-replay", base + "/payments", KeyStrategy.fixedPool(256, "replay-" + System.nanoTime() + "-"),
            body));
    Report report = LoadHarness.builder().concurrency(concurrency).passSeconds(seconds).passes(passes)
        .warmupSeconds(warmup).progress(System.err::println).build().run(scenarios);
    System.out.println(report.toMarkdown());
    ScenarioResult bare = report.scenario("baseline");
    ScenarioResult first = report.scenario("idem-first");
    ScenarioResult replay = report.scenario("idem-replay");
    System.out.println(String.format(Locale.ROOT, "first-execution throughput ratio (idem-first / baseline): %.3f",
        report.ratio("idem-first", "baseline")));
    System.out.println(String.format(Locale.ROOT, "replay throughput ratio (idem-replay / baseline): %.3f",
        report.ratio("idem-replay", "baseline")));
    System.out.println(String.format(Locale.ROOT, "added latency, first execution: p50 %+.2f ms, p99 %+.2f ms",
        (first.medianP50Micros() - bare.medianP50Micros()) / 1000.0,
        (first.medianP99Micros() - bare.medianP99Micros()) / 1000.0));
    System.out.println(String.format(Locale.ROOT, "added latency, replay: p50 %+.2f ms, p99 %+.2f ms",
        (replay.medianP50Micros() - bare.medianP50Micros()) / 1000.0,
        (replay.medianP99Micros() - bare.medianP99Micros()) / 1000.0));
    if (jsonOut != null) {
      Files.writeString(Path.of(jsonOut), report.toJson(), StandardCharsets.UTF_8);
    }
    System.exit(report.clean() ? 0 : 1);
  }

  private static Scenario scenario(String name, String url, KeyStrategy keys, String body) {
    return Scenario.builder(name).method("POST").url(url).header("Authorization", "Bearer sk_test_alice")
        .header("Content-Type", "application/json").body(body).keys(keys).expectStatus(201).build();
  }

  private static void usage(String problem) {
    System.err.println("error: " + problem);
    System.err.println("usage: PaymentsServiceLoad --base URL [--concurrency N] [--seconds N] [--passes N]"
        + " [--warmup N] [--json FILE]");
    System.exit(2);
  }
}
