package dev.idem.bench.http;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * Command-line entry point of the HTTP load harness: measures {@code --url} (and {@code --baseline-url}, if given,
 * as the first scenario the ratio is taken against) and prints the Markdown report to standard output, progress to
 * standard error.
 *
 * <pre>java -cp idem-bench/target/benchmarks.jar dev.idem.bench.http.HttpLoadMain --url http://127.0.0.1:8080/x
 *     --baseline-url http://127.0.0.1:8080/y --method POST --header 'Content-Type: application/json'
 *     --body '{"amount":100}' --keys unique --concurrency 16 --seconds 5 --passes 6 --warmup 3</pre>
 *
 * <p>Exit status: 0 on a clean run, 1 when the report carries warnings (such as a pass in which no request
 * succeeded) or the JSON file cannot be written, 2 for a usage error. Holds no state; each call runs its own
 * {@link LoadHarness}.
 */
public final class HttpLoadMain {
  static final String USAGE = String.join("\n",
      "usage: HttpLoadMain --url URL [options]",
      "  --url URL               endpoint to measure (http://127.0.0.1 or http://localhost only)",
      "  --name NAME             its name in the report (default idem)",
      "  --baseline-url URL      endpoint to compare with; measured first, ratios are url / baseline-url",
      "  --baseline-name NAME    its name in the report (default baseline)",
      "  --method METHOD         HTTP method (default POST with --body, else GET)",
      "  --header 'Name: value'  fixed request header, repeatable",
      "  --body TEXT             request body, sent as UTF-8",
      "  --keys none|unique|pool:N        Idempotency-Key strategy (default unique)",
      "  --baseline-keys none|unique|pool:N  strategy for the baseline (default: same as --keys)",
      "  --expect S[,S...]       statuses that count as success (default any 2xx)",
      "  --concurrency N         closed-loop worker threads (default 16)",
      "  --seconds N             seconds per measured pass (default 5)",
      "  --passes N              measured passes per scenario (default 6)",
      "  --warmup N              warm-up seconds per scenario (default 3)",
      "  --drain N               seconds in-flight requests may finish after a pass (default 2)",
      "  --json FILE             also write the report as JSON to FILE",
      "  --help                  this text");

  private static final Set<String> VALUE_FLAGS = Set.of("url", "name", "baseline-url", "baseline-name", "method",
      "header", "body", "keys", "baseline-keys", "expect", "concurrency", "seconds", "passes", "warmup", "drain",
      "json");

  private HttpLoadMain() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the harness as {@link #main} would and returns the exit status instead of exiting. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    Plan plan;
    try {
      plan = parse(args, err::println);
    } catch (IllegalArgumentException | IllegalStateException e) {
      err.println("error: " + e.getMessage());
      err.println(USAGE);
      return 2;
    }
    if (plan == null) {
      out.println(USAGE);
      return 0;
    }
    err.println("# " + plan.harness() + ": " + plan.scenarios());
    Report report = plan.harness().run(plan.scenarios());
    out.print(report.toMarkdown());
    out.flush();
    int status = report.clean() ? 0 : 1;
    if (plan.json() != null) {
      try {
        Files.writeString(plan.json(), report.toJson() + "\n", StandardCharsets.UTF_8);
      } catch (IOException e) {
        err.println("error: cannot write " + plan.json() + ": " + e);
        status = 1;
      }
    }
    return status;
  }

  /** A parsed command line. */
  record Plan(LoadHarness harness, List<Scenario> scenarios, Path json) {}

  /** The run described by {@code args}, reporting progress to {@code progress}; null for {@code --help}. */
  static Plan parse(String[] args, Consumer<String> progress) {
    Map<String, String> single = new HashMap<>();
    List<String> headers = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--help") || arg.equals("-h")) {
        return null;
      }
      String flag = arg.startsWith("--") ? arg.substring(2) : null;
      if (flag == null || !VALUE_FLAGS.contains(flag)) {
        throw new IllegalArgumentException(flag == null ? "unexpected argument \"" + arg + "\"" : "unknown flag "
            + arg);
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(arg + " needs a value");
      }
      String value = args[++i];
      if (flag.equals("header")) {
        headers.add(value);
      } else if (single.putIfAbsent(flag, value) != null) {
        throw new IllegalArgumentException(arg + " given more than once");
      }
    }
    String url = single.get("url");
    if (url == null) {
      throw new IllegalArgumentException("--url is required");
    }
    LoadHarness.Builder harness = LoadHarness.builder().progress(progress);
    setInt(single, "concurrency", harness::concurrency);
    setInt(single, "seconds", harness::passSeconds);
    setInt(single, "passes", harness::passes);
    setInt(single, "warmup", harness::warmupSeconds);
    setInt(single, "drain", harness::drainSeconds);
    KeyStrategy keys = keys(single, "keys", KeyStrategy.unique());
    KeyStrategy baselineKeys = keys(single, "baseline-keys", keys);
    List<Scenario> scenarios = new ArrayList<>();
    if (single.containsKey("baseline-url")) {
      scenarios.add(scenario(single.getOrDefault("baseline-name", "baseline"), single.get("baseline-url"),
          baselineKeys, single, headers));
    } else if (single.containsKey("baseline-name") || single.containsKey("baseline-keys")) {
      throw new IllegalArgumentException("--baseline-name and --baseline-keys need --baseline-url");
    }
    scenarios.add(scenario(single.getOrDefault("name", "idem"), url, keys, single, headers));
    if (scenarios.stream().map(Scenario::name).distinct().count() != scenarios.size()) {
      throw new IllegalArgumentException("--name and --baseline-name must differ, both are \""
          + scenarios.get(0).name() + "\"");
    }
    Path json = single.containsKey("json") ? Path.of(single.get("json")) : null;
    return new Plan(harness.build(), List.copyOf(scenarios), json);
  }

  private static Scenario scenario(String name, String url, KeyStrategy keys, Map<String, String> single,
      List<String> headers) {
    String body = single.get("body");
    Scenario.Builder b = Scenario.builder(name).url(url).keys(keys)
        .method(single.getOrDefault("method", body == null ? "GET" : "POST"));
    for (String h : headers) {
      int colon = h.indexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException("--header must look like 'Name: value', got \"" + h + "\"");
      }
      b.header(h.substring(0, colon).strip(), h.substring(colon + 1).strip());
    }
    if (body != null) {
      b.body(body);
    }
    if (single.containsKey("expect")) {
      String[] parts = single.get("expect").split(",", -1);
      int[] statuses = new int[parts.length];
      for (int i = 0; i < parts.length; i++) {
        statuses[i] = parseInt("--expect", parts[i].strip(), single.get("expect"));
      }
      b.expectStatus(statuses);
    }
    return b.build();
  }

  private static void setInt(Map<String, String> single, String flag, IntFunction<LoadHarness.Builder> setter) {
    String value = single.get(flag);
    if (value != null) {
      int n = parseInt("--" + flag, value, value);
      try {
        setter.apply(n);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("--" + flag + ": " + e.getMessage(), e);
      }
    }
  }

  private static KeyStrategy keys(Map<String, String> single, String flag, KeyStrategy fallback) {
    String value = single.get(flag);
    try {
      return value == null ? fallback : KeyStrategy.parse(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--" + flag + ": " + e.getMessage(), e);
    }
  }

  private static int parseInt(String flag, String text, String whole) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " must be an integer" + (text.equals(whole) ? "" : " list")
          + ", got \"" + whole + "\"", e);
    }
  }

}
