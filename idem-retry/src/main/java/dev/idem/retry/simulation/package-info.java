/**
 * A contention simulator for retry strategies: N clients race to write one resource under optimistic concurrency,
 * in virtual time, and back off on conflicts with Idem's own {@link dev.idem.retry.Backoff} (and, for one strategy,
 * a shared {@link dev.idem.retry.RetryBudget}). Entry points: {@link dev.idem.retry.simulation.ContentionSimulation}
 * for one configuration and {@link dev.idem.retry.simulation.Sweep} for a table over client counts and strategies.
 * Two sets of conventions ({@link dev.idem.retry.simulation.Model}): Idem's own, and those of the simulation published
 * with the AWS post "Exponential Backoff and Jitter" (2015). Both are described in {@code docs/simulation.md};
 * {@code ./idem simulate} runs them from the command line.
 */
package dev.idem.retry.simulation;
