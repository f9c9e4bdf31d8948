package dev.idem.retry;

/**
 * How a computed exponential delay is randomised. {@link #FULL} is the default: it spreads competing clients best
 * (see the contention simulator, {@code ./idem simulate}).
 */
public enum Jitter {
  /** No randomisation: {@code min(cap, base * 2^(retry-1))}. Clients that failed together retry together. */
  NONE,
  /** Uniform in {@code [0, exponential]}. */
  FULL,
  /** Half the exponential delay plus uniform in {@code [0, half]}. */
  EQUAL,
  /** {@code min(cap, uniform[base, 3 * previous delay])}, after the AWS Architecture Blog's "decorrelated jitter". */
  DECORRELATED
}
