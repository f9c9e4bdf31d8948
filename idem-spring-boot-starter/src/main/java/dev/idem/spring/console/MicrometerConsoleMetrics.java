package dev.idem.spring.console;

import dev.idem.console.ConsoleMetrics;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.distribution.CountAtBucket;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The console's charts from the application's meters: the cumulative count of {@code idem.requests} per outcome, and
 * the histogram of {@code idem.replay.key.age} in a few bars, both summed over every operation. Thread-safe.
 *
 * <p>The bars are a factor of four apart (1 s, 4 s, 16 s ... 18 h): powers of four are boundaries of Micrometer's
 * percentile histogram, so each bar's count is exact rather than interpolated. Counts are what the registry holds:
 * since the start with the Prometheus registry, a recent window with registries that decay their histograms. The
 * {@code max_seconds} is the snapshot's max, which Micrometer keeps over a short decaying window.
 */
public final class MicrometerConsoleMetrics implements ConsoleMetrics {
  static final List<String> OUTCOMES = List.of("created", "replayed", "mismatch", "in_progress", "released");
  /** The upper bounds of the key-age bars, in seconds; a last bar holds the older ones. */
  static final List<Double> KEY_AGE_BOUNDS =
      List.of(1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0);

  private final MeterRegistry registry;

  public MicrometerConsoleMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  @Override
  public Map<String, Object> summary(Instant now) {
    Map<String, Object> requests = new LinkedHashMap<>();
    OUTCOMES.forEach(o -> requests.put(o, 0L));
    for (Counter c : registry.find("idem.requests").counters()) {
      String outcome = c.getId().getTag("outcome");
      if (outcome != null) {
        requests.merge(outcome, Math.round(c.count()), (a, b) -> (Long) a + (Long) b);
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("requests", requests);
    out.put("replay_key_age", keyAge());
    return out;
  }

  private Map<String, Object> keyAge() {
    double[] cumulative = new double[KEY_AGE_BOUNDS.size()];
    double total = 0;
    double sum = 0;
    double max = 0;
    for (DistributionSummary s : registry.find("idem.replay.key.age").summaries()) {
      HistogramSnapshot snapshot = s.takeSnapshot();
      CountAtBucket[] buckets = snapshot.histogramCounts();
      sum += snapshot.total();
      max = Math.max(max, snapshot.max());
      if (buckets.length == 0) {
        continue;
      }
      total += buckets[buckets.length - 1].count();
      for (int i = 0; i < cumulative.length; i++) {
        cumulative[i] += countAtOrBelow(buckets, KEY_AGE_BOUNDS.get(i));
      }
    }
    List<Map<String, Object>> bars = new ArrayList<>();
    double below = 0;
    for (int i = 0; i < cumulative.length; i++) {
      bars.add(bar(KEY_AGE_BOUNDS.get(i), Math.round(cumulative[i] - below)));
      below = cumulative[i];
    }
    bars.add(bar(null, Math.round(total - below)));
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("count", Math.round(total));
    out.put("sum_seconds", sum);
    out.put("max_seconds", max);
    out.put("buckets", bars);
    return out;
  }

  private static Map<String, Object> bar(Double bound, long count) {
    Map<String, Object> bar = new LinkedHashMap<>();
    bar.put("le_seconds", bound);
    bar.put("count", count);
    return bar;
  }

  /** The cumulative count at the largest boundary at or below {@code bound}. */
  private static double countAtOrBelow(CountAtBucket[] buckets, double bound) {
    double count = 0;
    for (CountAtBucket b : buckets) {
      if (b.bucket() > bound) {
        break;
      }
      count = b.count();
    }
    return count;
  }

  @Override
  public String toString() {
    return "MicrometerConsoleMetrics{" + registry.getClass().getSimpleName() + '}';
  }
}
