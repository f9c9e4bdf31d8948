package dev.idem.bench.http;

import java.util.HashMap;
import java.util.Map;
import org.HdrHistogram.Histogram;

/** What one worker saw during one pass. Confined to that worker until it hands the tally over. */
final class Tally {
  final Histogram latencyMicros = new Histogram(3);
  final Map<Integer, Long> errorsByStatus = new HashMap<>();
  final Map<String, Long> errorsByException = new HashMap<>();
  long requests;
  long cutOff;
  long finishedAt;

  void success(long micros) {
    requests++;
    latencyMicros.recordValue(Math.max(0, micros));
  }

  void status(int status) {
    requests++;
    errorsByStatus.merge(status, 1L, Long::sum);
  }

  void exception(Throwable t) {
    requests++;
    errorsByException.merge(t.getClass().getName(), 1L, Long::sum);
  }

  long succeeded() {
    return requests - errorsByStatus.values().stream().mapToLong(Long::longValue).sum()
        - errorsByException.values().stream().mapToLong(Long::longValue).sum();
  }
}
