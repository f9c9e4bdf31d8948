package dev.idem.bench.http;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The results of one {@link LoadHarness#run}: per scenario and pass, medians, paired throughput ratios, and loud
 * warnings (passes in which nothing succeeded, pool keys that could not be stored), as Markdown or JSON. The first
 * scenario is the baseline that the ratio sections compare the others with. Immutable and thread-safe.
 */
public final class Report {
  private final LoadHarness settings;
  private final List<ScenarioResult> scenarios;
  private final List<String> warnings;

  /**
   * @param settings the harness that produced the results
   * @param scenarios results in run order, with distinct names
   * @param warnings problems to show at the top of the report
   */
  public Report(LoadHarness settings, List<ScenarioResult> scenarios, List<String> warnings) {
    this.settings = Objects.requireNonNull(settings, "settings");
    this.scenarios = List.copyOf(scenarios);
    this.warnings = List.copyOf(warnings);
    if (this.scenarios.stream().map(ScenarioResult::name).distinct().count() != this.scenarios.size()) {
      throw new IllegalArgumentException("scenario names must be distinct, got "
          + this.scenarios.stream().map(ScenarioResult::name).toList());
    }
  }

  public LoadHarness settings() {
    return settings;
  }

  public List<ScenarioResult> scenarios() {
    return scenarios;
  }

  /** @throws IllegalArgumentException naming {@code name} when there is no such scenario */
  public ScenarioResult scenario(String name) {
    return scenarios.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow(
        () -> new IllegalArgumentException("no scenario named " + name + "; have "
            + scenarios.stream().map(ScenarioResult::name).toList()));
  }

  /** Problems worth shouting about, such as passes in which no request succeeded. */
  public List<String> warnings() {
    return warnings;
  }

  /** True when no warning was raised. */
  public boolean clean() {
    return warnings.isEmpty();
  }

  /** Every pass of every scenario in the order they ran. */
  public List<PassResult> passesInRunOrder() {
    return scenarios.stream().flatMap(s -> s.passes().stream())
        .sorted(Comparator.comparingInt(PassResult::runOrder)).toList();
  }

  /**
   * The throughput of {@code a} divided by that of {@code b}, per pass number present in both, in pass order;
   * passes in which {@code b} had no successful request have no ratio.
   */
  public List<Double> pairedRatios(String a, String b) {
    Map<Integer, PassResult> denominators = scenario(b).passes().stream()
        .collect(Collectors.toMap(PassResult::pass, p -> p, (x, y) -> x));
    List<Double> ratios = new ArrayList<>();
    for (PassResult p : scenario(a).passes()) {
      PassResult d = denominators.get(p.pass());
      if (d != null && d.throughput() > 0) {
        ratios.add(p.throughput() / d.throughput());
      }
    }
    return List.copyOf(ratios);
  }

  /**
   * The median over paired passes of (throughput of {@code a} in pass i / throughput of {@code b} in pass i), see
   * {@link #pairedRatios}; NaN when no pass pairs up.
   */
  public double ratio(String a, String b) {
    return ScenarioResult.median(pairedRatios(a, b).stream().mapToDouble(Double::doubleValue).toArray());
  }

  /** A summary table, a ratio section against the first scenario, and a per-pass table. */
  public String toMarkdown() {
    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, "## HTTP load: %d scenarios, %d threads, %d passes x %d s, alternating"
        + " (warm-up %d s each)%n%n", scenarios.size(), settings.concurrency(), settings.passes(),
        settings.passSeconds(), settings.warmupSeconds()));
    for (String w : warnings) {
      md.append("> **WARNING: ").append(w).append("**\n");
    }
    if (!warnings.isEmpty()) {
      md.append('\n');
    }
    md.append("| scenario | median req/s | p50 ms | p99 ms | errors |\n| --- | ---: | ---: | ---: | --- |\n");
    for (ScenarioResult s : scenarios) {
      md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s |%n", cell(s.name()),
          number(s.medianThroughput(), 1), millis(s.medianP50Micros()), millis(s.medianP99Micros()),
          errorCell(s.errors(), s.errorsByStatus(), s.errorsByException())));
    }
    md.append("\nreq/s counts responses with an expected status; latencies are of those responses only;"
        + " medians are over passes.\n\n");
    for (ScenarioResult s : scenarios) {
      md.append("- ").append(cell(s.name())).append(": ").append(cell(s.description())).append('\n');
    }
    md.append('\n');
    if (scenarios.size() > 1) {
      String base = scenarios.get(0).name();
      md.append("### Throughput ratios (median over passes of the per-pass ratio)\n\n")
          .append("| ratio | median | per pass |\n| --- | ---: | --- |\n");
      for (ScenarioResult s : scenarios.subList(1, scenarios.size())) {
        md.append(String.format(Locale.ROOT, "| %s / %s | %s | %s |%n", cell(s.name()), cell(base),
            number(ratio(s.name(), base), 3), pairedRatios(s.name(), base).stream().map(r -> number(r, 3))
                .collect(Collectors.joining(", "))));
      }
      md.append('\n');
    }
    md.append("### Per pass\n\n| pass | scenario | requests | errors | cut off | req/s | p50 ms | p90 ms | p99 ms |"
        + " max ms |\n| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (PassResult p : passesInRunOrder()) {
      md.append(String.format(Locale.ROOT, "| %d | %s | %d | %s | %d | %s | %s | %s | %s | %s |%n", p.pass(),
          cell(p.scenario()), p.requests(), errorCell(p.errors(), p.errorsByStatus(), p.errorsByException())
              + (p.allFailed() ? " **ALL FAILED**" : ""), p.cutOff(), number(p.throughput(), 1),
          millis(p.p50Micros()), millis(p.p90Micros()), millis(p.p99Micros()), millis(p.maxMicros())));
    }
    return md.toString();
  }

  /** The same content as {@link #toMarkdown()} as one JSON object; unknown numbers (NaN) are {@code null}. */
  public String toJson() {
    StringBuilder j = new StringBuilder("{\"settings\":{");
    j.append("\"concurrency\":").append(settings.concurrency())
        .append(",\"passSeconds\":").append(settings.passSeconds())
        .append(",\"passes\":").append(settings.passes())
        .append(",\"warmupSeconds\":").append(settings.warmupSeconds())
        .append(",\"drainSeconds\":").append(settings.drainSeconds()).append("},\"scenarios\":[");
    for (int i = 0; i < scenarios.size(); i++) {
      ScenarioResult s = scenarios.get(i);
      j.append(i == 0 ? "" : ",").append("{\"name\":").append(string(s.name()))
          .append(",\"description\":").append(string(s.description()))
          .append(",\"medianThroughput\":").append(json(s.medianThroughput()))
          .append(",\"medianP50Micros\":").append(json(s.medianP50Micros()))
          .append(",\"medianP99Micros\":").append(json(s.medianP99Micros()))
          .append(",\"requests\":").append(s.requests())
          .append(",\"errors\":").append(s.errors())
          .append(",\"errorsByStatus\":").append(counts(s.errorsByStatus()))
          .append(",\"errorsByException\":").append(counts(s.errorsByException()))
          .append(",\"passes\":[");
      for (int k = 0; k < s.passes().size(); k++) {
        PassResult p = s.passes().get(k);
        j.append(k == 0 ? "" : ",").append("{\"pass\":").append(p.pass())
            .append(",\"runOrder\":").append(p.runOrder())
            .append(",\"requests\":").append(p.requests())
            .append(",\"errors\":").append(p.errors())
            .append(",\"errorsByStatus\":").append(counts(p.errorsByStatus()))
            .append(",\"errorsByException\":").append(counts(p.errorsByException()))
            .append(",\"cutOff\":").append(p.cutOff())
            .append(",\"elapsedNanos\":").append(p.elapsedNanos())
            .append(",\"throughput\":").append(json(p.throughput()))
            .append(",\"p50Micros\":").append(p.p50Micros())
            .append(",\"p90Micros\":").append(p.p90Micros())
            .append(",\"p99Micros\":").append(p.p99Micros())
            .append(",\"maxMicros\":").append(p.maxMicros())
            .append(",\"allFailed\":").append(p.allFailed()).append('}');
      }
      j.append("]}");
    }
    j.append("],\"ratios\":[");
    for (int i = 1; i < scenarios.size(); i++) {
      String a = scenarios.get(i).name();
      String b = scenarios.get(0).name();
      j.append(i == 1 ? "" : ",").append("{\"numerator\":").append(string(a))
          .append(",\"denominator\":").append(string(b))
          .append(",\"median\":").append(json(ratio(a, b)))
          .append(",\"perPass\":[").append(pairedRatios(a, b).stream().map(Report::json)
              .collect(Collectors.joining(","))).append("]}");
    }
    j.append("],\"warnings\":[").append(warnings.stream().map(Report::string).collect(Collectors.joining(",")))
        .append("]}");
    return j.toString();
  }

  private static String errorCell(long errors, Map<Integer, Long> byStatus, Map<String, Long> byException) {
    if (errors == 0) {
      return "0";
    }
    List<String> parts = new ArrayList<>();
    byStatus.forEach((k, v) -> parts.add("status " + k + ": " + v));
    byException.forEach((k, v) -> parts.add(k + ": " + v));
    return errors + " (" + String.join("; ", parts) + ")";
  }

  private static String cell(String text) {
    return text.replace("|", "\\|").replace("\n", " ");
  }

  private static String number(double value, int decimals) {
    return Double.isFinite(value) ? String.format(Locale.ROOT, "%." + decimals + "f", value) : "n/a";
  }

  private static String millis(double micros) {
    return number(micros / 1e3, 3);
  }

  private static String json(double value) {
    return Double.isFinite(value) ? Double.toString(value) : "null";
  }

  private static String counts(Map<?, Long> counts) {
    return counts.entrySet().stream().map(e -> string(String.valueOf(e.getKey())) + ":" + e.getValue())
        .collect(Collectors.joining(",", "{", "}"));
  }

  private static String string(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }

  @Override
  public String toString() {
    return toMarkdown();
  }
}
