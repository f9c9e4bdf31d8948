package dev.idem.bench.http;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/**
 * All measured passes of one scenario, in pass order, with their medians. Immutable and thread-safe.
 *
 * @param name the scenario name
 * @param description method, URL and key strategy, for the report
 * @param passes the measured passes in pass order
 */
public record ScenarioResult(String name, String description, List<PassResult> passes) {

  public ScenarioResult {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(description, "description");
    passes = List.copyOf(passes);
    for (PassResult p : passes) {
      if (!p.scenario().equals(name)) {
        throw new IllegalArgumentException("pass " + p.pass() + " belongs to scenario " + p.scenario() + ", not "
            + name);
      }
    }
  }

  /** The median over passes of successful requests per second; NaN without passes. */
  public double medianThroughput() {
    return median(passes, PassResult::throughput, false);
  }

  /** The median over passes with at least one success of the pass's p50 latency; NaN when there are none. */
  public double medianP50Micros() {
    return median(passes, PassResult::p50Micros, true);
  }

  /** The median over passes with at least one success of the pass's p99 latency; NaN when there are none. */
  public double medianP99Micros() {
    return median(passes, PassResult::p99Micros, true);
  }

  public long requests() {
    return passes.stream().mapToLong(PassResult::requests).sum();
  }

  public long errors() {
    return passes.stream().mapToLong(PassResult::errors).sum();
  }

  /** Unexpected statuses summed over all passes. */
  public Map<Integer, Long> errorsByStatus() {
    Map<Integer, Long> total = new TreeMap<>();
    passes.forEach(p -> p.errorsByStatus().forEach((k, v) -> total.merge(k, v, Long::sum)));
    return Collections.unmodifiableMap(total);
  }

  /** Failures without a response summed over all passes, by exception class name. */
  public Map<String, Long> errorsByException() {
    Map<String, Long> total = new TreeMap<>();
    passes.forEach(p -> p.errorsByException().forEach((k, v) -> total.merge(k, v, Long::sum)));
    return Collections.unmodifiableMap(total);
  }

  /** The passes in which no request succeeded. */
  public List<PassResult> failedPasses() {
    return passes.stream().filter(PassResult::allFailed).toList();
  }

  private static double median(List<PassResult> passes, ToDoubleFunction<PassResult> value, boolean successfulOnly) {
    return median(passes.stream().filter(p -> !successfulOnly || !p.allFailed()).mapToDouble(value).toArray());
  }

  /** The median of {@code values}, the mean of the middle two for an even count; NaN when empty. */
  static double median(double[] values) {
    if (values.length == 0) {
      return Double.NaN;
    }
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    int mid = sorted.length / 2;
    return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
}
