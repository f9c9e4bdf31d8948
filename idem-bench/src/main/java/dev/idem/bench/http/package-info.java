/**
 * HTTP load harness: measures local HTTP endpoints side by side in one run (for example an endpoint behind the
 * idempotency layer and the same endpoint without it), at fixed concurrency with closed-loop worker threads,
 * alternating the scenarios pass by pass, and reports medians of per-pass throughput ratios and latency
 * percentiles.
 *
 * <p>Entry points: {@link dev.idem.bench.http.LoadHarness} for Java callers (describe each endpoint as a
 * {@link dev.idem.bench.http.Scenario}, read the {@link dev.idem.bench.http.Report}), and
 * {@link dev.idem.bench.http.HttpLoadMain} on the command line:
 *
 * <pre>java -cp idem-bench/target/benchmarks.jar dev.idem.bench.http.HttpLoadMain \
 *     --url http://127.0.0.1:8080/payments --baseline-url http://127.0.0.1:8080/plain/payments \
 *     --method POST --header 'Content-Type: application/json' --body '{"amount":100}' --keys unique</pre>
 *
 * <p>Traffic only ever goes to {@code http://127.0.0.1} or {@code http://localhost}.
 */
package dev.idem.bench.http;
