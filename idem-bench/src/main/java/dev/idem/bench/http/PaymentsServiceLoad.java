package dev.idem.bench.http;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The reference service's benchmark: {@code POST /baseline/payments} (the same work without the idempotency layer)
 * against {@code POST /payments} with a fresh key per request (first executions, without and with
 * {@code Idempotency-Attempt: 1}) and with a pool of keys sent before (replays), alternating passes in one run. Prints
 * the Markdown report and the ratios; the service must already run (see {@code idem-bench/scripts/payments-http.sh}).
 *
 * <pre>
 * java -cp idem-bench/target/benchmarks.jar dev.idem.bench.http.PaymentsServiceLoad \
 *   --base http://127.0.0.1:18080 [--concurrency 16] [--seconds 10] [--passes 6] [--warmup 5] [--json out.json] \
 *   [--scenarios baseline,idem-first,idem-first-attempt,idem-replay]
 * </pre>
 *
 * <p>{@code --scenarios} runs a subset, in the order given (a profile of one route's load, for example); the ratios
 * are printed for those present with {@code baseline}.
 */
public final class PaymentsServiceLoad {
  private static final String BASELINE = "baseline";
  private static final String FIRST = "idem-first";
  private static final String FIRST_ATTEMPT = "idem-first-attempt";
  private static final String REPLAY = "idem-replay";

  private PaymentsServiceLoad() {}

  public static void main(String[] args) throws Exception {
    String base = "http://127.0.0.1:18080";
    int concurrency = 16;
    int seconds = 10;
    int passes = 6;
    int warmup = 5;
    String jsonOut = null;
    List<String> only = List.of(BASELINE, FIRST, FIRST_ATTEMPT, REPLAY);
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
        case "--scenarios": only = Arrays.stream(v.split(",")).map(String::strip).toList(); break;
        default: usage("unknown flag " + flag);
      }
    }
    String body = "{\"account_id\":\"acct_bench\",\"amount\":100,\"currency\":\"EUR\"}";
    Map<String, Scenario> all = new LinkedHashMap<>();
    all.put(BASELINE, scenario(BASELINE, base + "/baseline/payments", KeyStrategy.none(), body));
    all.put(FIRST, scenario(FIRST, base + "/payments", KeyStrategy.unique(), body));
    // what idem-client sends on its first try: no look-up before the first phase, the record's unique key decides
    all.put(FIRST_ATTEMPT, Scenario.builder(FIRST_ATTEMPT).method("POST").url(base + "/payments")
        .header("Authorization", "Bearer sk_test_alice").header("Content-Type", "application/json")
        .header("Idempotency-Attempt", "1").body(body).keys(KeyStrategy.unique()).expectStatus(201).build());
    all.put(REPLAY, scenario(REPLAY, base + "/payments",
        KeyStrategy.fixedPool(256, "replay-" + System.nanoTime() + "-"), body));
    List<Scenario> scenarios = new ArrayList<>();
    for (String name : only) {
      Scenario s = all.get(name);
      if (s == null || scenarios.contains(s)) {
        usage("--scenarios takes distinct names among " + all.keySet() + ", got " + name);
      }
      scenarios.add(s);
    }
    Report report = LoadHarness.builder().concurrency(concurrency).passSeconds(seconds).passes(passes)
        .warmupSeconds(warmup).progress(System.err::println).build().run(scenarios);
    System.out.println(report.toMarkdown());
    if (only.contains(BASELINE)) {
      printAgainstBaseline(report, only);
    }
    if (jsonOut != null) {
      Files.writeString(Path.of(jsonOut), report.toJson(), StandardCharsets.UTF_8);
    }
    System.exit(report.clean() ? 0 : 1);
  }

  private static void printAgainstBaseline(Report report, List<String> only) {
    ScenarioResult bare = report.scenario(BASELINE);
    if (only.contains(FIRST)) {
      printAgainst(report, bare, FIRST, "first-execution", "first execution");
    }
    if (only.contains(FIRST_ATTEMPT)) {
      printAgainst(report, bare, FIRST_ATTEMPT, "first-attempt", "first attempt (Idempotency-Attempt: 1)");
    }
    if (only.contains(REPLAY)) {
      printAgainst(report, bare, REPLAY, "replay", "replay");
    }
  }

  private static void printAgainst(Report report, ScenarioResult bare, String name, String ratioLabel,
      String latencyLabel) {
    ScenarioResult s = report.scenario(name);
    System.out.println(String.format(Locale.ROOT, "%s throughput ratio (%s / baseline): %.3f", ratioLabel, name,
        report.ratio(name, BASELINE)));
    System.out.println(String.format(Locale.ROOT, "added latency, %s: p50 %+.2f ms, p99 %+.2f ms", latencyLabel,
        (s.medianP50Micros() - bare.medianP50Micros()) / 1000.0,
        (s.medianP99Micros() - bare.medianP99Micros()) / 1000.0));
  }

  private static Scenario scenario(String name, String url, KeyStrategy keys, String body) {
    return Scenario.builder(name).method("POST").url(url).header("Authorization", "Bearer sk_test_alice")
        .header("Content-Type", "application/json").body(body).keys(keys).expectStatus(201).build();
  }

  private static void usage(String problem) {
    System.err.println("error: " + problem);
    System.err.println("usage: PaymentsServiceLoad --base URL [--concurrency N] [--seconds N] [--passes N]"
        + " [--warmup N] [--json FILE] [--scenarios baseline,idem-first,idem-first-attempt,idem-replay]");
    System.exit(2);
  }
}
