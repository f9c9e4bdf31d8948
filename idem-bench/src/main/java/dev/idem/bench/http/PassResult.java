package dev.idem.bench.http;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The outcome of one scenario in one measured pass. Immutable and thread-safe.
 *
 * @param scenario the scenario name
 * @param pass the pass number, from 1; passes of different scenarios with the same number are paired for ratios
 * @param runOrder the position of this measurement in the whole run, from 0 (pass 1 of every scenario, then pass 2,
 *     ...)
 * @param requests requests that finished with a response or an exception during the pass
 * @param errorsByStatus responses whose status was not expected, by status
 * @param errorsByException requests that failed without a response, by exception class name
 * @param cutOff requests still in flight at the end of the drain; abandoned and counted nowhere else
 * @param elapsedNanos from the start of the pass until its last request finished
 * @param p50Micros median latency of the successful requests, 0 when there were none
 * @param p90Micros 90th percentile latency of the successful requests
 * @param p99Micros 99th percentile latency of the successful requests
 * @param maxMicros maximum latency of the successful requests
 */
public record PassResult(String scenario, int pass, int runOrder, long requests, Map<Integer, Long> errorsByStatus,
    Map<String, Long> errorsByException, long cutOff, long elapsedNanos, long p50Micros, long p90Micros,
    long p99Micros, long maxMicros) {

  public PassResult {
    Objects.requireNonNull(scenario, "scenario");
    errorsByStatus = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(errorsByStatus,
        "errorsByStatus")));
    errorsByException = Collections.unmodifiableMap(new TreeMap<>(Objects.requireNonNull(errorsByException,
        "errorsByException")));
    if (pass < 1) {
      throw new IllegalArgumentException("pass must be at least 1, got " + pass);
    }
    if (runOrder < 0) {
      throw new IllegalArgumentException("runOrder must be non-negative, got " + runOrder);
    }
    if (elapsedNanos <= 0) {
      throw new IllegalArgumentException("elapsedNanos must be positive, got " + elapsedNanos);
    }
    if (requests < 0 || cutOff < 0) {
      throw new IllegalArgumentException("requests and cutOff must be non-negative, got " + requests + " and "
          + cutOff);
    }
    long errors = sum(errorsByStatus) + sum(errorsByException);
    if (errors > requests) {
      throw new IllegalArgumentException("errors (" + errors + ") exceed requests (" + requests + ")");
    }
    if (p50Micros < 0 || p90Micros < p50Micros || p99Micros < p90Micros || maxMicros < p99Micros) {
      throw new IllegalArgumentException("latencies must satisfy 0 <= p50 <= p90 <= p99 <= max, got " + p50Micros
          + ", " + p90Micros + ", " + p99Micros + ", " + maxMicros);
    }
  }

  private static long sum(Map<?, Long> counts) {
    return counts.values().stream().mapToLong(Long::longValue).sum();
  }

  /** Requests that got an unexpected status or no response. */
  public long errors() {
    return sum(errorsByStatus) + sum(errorsByException);
  }

  /** Requests that got an expected status. */
  public long succeeded() {
    return requests - errors();
  }

  /** Successful requests per second. */
  public double throughput() {
    return succeeded() / (elapsedNanos / 1e9);
  }

  /** True when no request of the pass succeeded. */
  public boolean allFailed() {
    return succeeded() == 0;
  }
}
