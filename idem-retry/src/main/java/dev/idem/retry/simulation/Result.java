package dev.idem.retry.simulation;

/**
 * The averages over the runs of one simulated configuration. Immutable.
 *
 * @param meanCompletionMillis virtual milliseconds from the start until the last client has written, averaged over
 *     runs
 * @param meanCalls calls sent per run (reads plus conditional writes, by all clients), averaged over runs
 * @param meanWrites conditional writes sent per run (by all clients), averaged over runs; what the simulation published
 *     with the AWS post counts as "calls"
 * @param meanRefusedRetries retries a {@link dev.idem.retry.RetryBudget} refused per run, averaged over runs; zero for
 *     strategies without a budget
 */
public record Result(double meanCompletionMillis, double meanCalls, double meanWrites, double meanRefusedRetries) {}
