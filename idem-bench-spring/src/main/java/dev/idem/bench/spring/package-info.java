/**
 * Load harnesses whose subject is built on Spring, kept apart from {@code idem-bench} so that the rest of the
 * benchmarks (and every published module) stay free of it: the peers' JDBC duplicate stores next to Idem's store, and
 * Spring's listener containers with and without {@code @IdempotentListener}.
 */
package dev.idem.bench.spring;
