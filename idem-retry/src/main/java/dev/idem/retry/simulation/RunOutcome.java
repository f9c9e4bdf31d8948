package dev.idem.retry.simulation;

/**
 * What one simulated run produced: when the last client wrote (virtual nanoseconds), the calls by kind, the retries a
 * budget refused, and how many clients wrote.
 */
record RunOutcome(long completionNanos, long reads, long writes, long refusedRetries, int completedClients) {
  long calls() {
    return reads + writes;
  }
}
