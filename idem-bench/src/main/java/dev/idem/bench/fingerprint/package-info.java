/**
 * JMH benchmark of request fingerprinting against plain SHA-256: {@link
 * dev.idem.bench.fingerprint.FingerprintBenchmark}. Results go to {@code BENCHMARKS.md}.
 */
package dev.idem.bench.fingerprint;
